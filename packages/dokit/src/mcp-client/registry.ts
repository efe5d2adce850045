// The durable registry of MCP servers an object is a client of: one row per
// server in the object's SQLite storage, with its OAuth data. Created on first
// use; an object that never adds a server runs no SQL.
import { DokitError } from "../lifecycle/errors";
import type { McpClientErrorCode } from "./errors";
import { utf8Length } from "../utf8/size";

/** The table McpClients owns. */
const SERVERS_TABLE = "dokit_mcp_servers";

/**
 * The largest stored record of one server: the UTF-8 bytes of its text columns (name, URL,
 * headers, OAuth registration, tokens, discovery). Far below the 2 MB SQLite allows per row in a
 * Durable Object, so a record is never half-written or refused by SQLite; real records are a few KB.
 */
const MAX_RECORD_BYTES = 1024 * 1024;

/** One stored server. JSON columns are `null` when empty. */
export type ServerRow = {
  id: string;
  name: string;
  url: string;
  /** `{ headers?, transport? }` as JSON. */
  options: string;
  /** The OAuth redirect URL used for this server (fixed at add time). */
  callback_url: string | null;
  /** 1 when added in local development (the default URL policy then allows http and loopback). */
  local: number;
  auth_url: string | null;
  client_info: string | null;
  tokens: string | null;
  verifier: string | null;
  discovery: string | null;
  /** The pending authorization's `state` (single use), and when it expires. */
  oauth_state: string | null;
  state_expires: number | null;
  created: number;
};

/** Writable columns of a row. */
export type ServerPatch = Partial<Omit<ServerRow, "id" | "created">>;

/** Synchronous access to the registry table. */
export class Registry {
  readonly #storage: DurableObjectStorage;
  #sql: SqlStorage | undefined;

  /** @param storage - the object's storage; nothing is read until first use */
  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  /** The object's SQL storage. @throws DokitError NO_SQLITE for a class without SQLite storage */
  get #storageSql(): SqlStorage {
    try {
      return this.#storage.sql;
    } catch (error) {
      throw new DokitError<McpClientErrorCode>(
        "NO_SQLITE",
        'McpClients keeps its servers in SQLite: bind this class in "new_sqlite_classes" (not "new_classes") in its wrangler migration',
        { cause: error },
      );
    }
  }

  get #db(): SqlStorage {
    if (this.#sql) return this.#sql;
    const sql = this.#storageSql;
    sql.exec(
      `CREATE TABLE IF NOT EXISTS ${SERVERS_TABLE} (
         id TEXT PRIMARY KEY,
         name TEXT NOT NULL,
         url TEXT NOT NULL,
         options TEXT NOT NULL DEFAULT '{}',
         callback_url TEXT,
         local INTEGER NOT NULL DEFAULT 0,
         auth_url TEXT,
         client_info TEXT,
         tokens TEXT,
         verifier TEXT,
         discovery TEXT,
         oauth_state TEXT,
         state_expires INTEGER,
         created INTEGER NOT NULL
       )`,
    );
    sql.exec(`CREATE UNIQUE INDEX IF NOT EXISTS ${SERVERS_TABLE}_by_state ON ${SERVERS_TABLE} (oauth_state) WHERE oauth_state IS NOT NULL`);
    return (this.#sql = sql);
  }

  /** @returns whether the table exists; reads never create it (an object that only renders the empty frame runs no DDL) */
  #exists(): boolean {
    if (this.#sql) return true;
    const sql = this.#storageSql;
    if (sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", SERVERS_TABLE).toArray().length === 0) return false;
    this.#sql = sql;
    return true;
  }

  /** @returns every stored server, oldest first */
  all(): ServerRow[] {
    if (!this.#exists()) return [];
    return this.#db.exec<ServerRow>(`SELECT * FROM ${SERVERS_TABLE} ORDER BY created, id`).toArray();
  }

  /** @returns one server, or `undefined` */
  get(id: string): ServerRow | undefined {
    if (!this.#exists()) return undefined;
    return this.#db.exec<ServerRow>(`SELECT * FROM ${SERVERS_TABLE} WHERE id = ?`, id).toArray()[0];
  }

  /**
   * Adds a server (an existing row with the same id is replaced).
   * @throws DokitError RECORD_TOO_LARGE over {@link MAX_RECORD_BYTES} (nothing is written)
   */
  insert(row: Pick<ServerRow, "id" | "name" | "url" | "options" | "callback_url" | "local">): void {
    checkSize(row);
    this.#db.exec(
      `INSERT OR REPLACE INTO ${SERVERS_TABLE} (id, name, url, options, callback_url, local, created) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      row.id,
      row.name,
      row.url,
      row.options,
      row.callback_url,
      row.local,
      Date.now(),
    );
  }

  /**
   * Updates columns of one server (a removed server is left removed).
   * @throws DokitError RECORD_TOO_LARGE when the record would grow over {@link MAX_RECORD_BYTES} (nothing is written)
   */
  update(id: string, patch: ServerPatch): void {
    const keys = Object.keys(patch) as (keyof ServerPatch)[];
    if (keys.length === 0) return;
    // Measured whole (updates are rare: the OAuth flow): the OAuth data comes from the server, any size.
    const current = this.get(id);
    if (current) checkSize({ ...current, ...patch });
    this.#db.exec(
      `UPDATE ${SERVERS_TABLE} SET ${keys.map((k) => `${k} = ?`).join(", ")} WHERE id = ?`,
      ...keys.map((k) => patch[k] ?? null),
      id,
    );
  }

  /** Deletes a server and its OAuth data. */
  delete(id: string): void {
    this.#db.exec(`DELETE FROM ${SERVERS_TABLE} WHERE id = ?`, id);
  }

  /**
   * Takes a pending authorization by its `state`: the state is cleared (single use) whether or not it expired.
   * @returns the server row when the state was pending and unexpired
   */
  takeState(state: string, now: number): ServerRow | undefined {
    if (!this.#exists()) return undefined;
    const row = this.#db.exec<ServerRow>(`SELECT * FROM ${SERVERS_TABLE} WHERE oauth_state = ?`, state).toArray()[0];
    if (!row) return undefined;
    this.update(row.id, { oauth_state: null, state_expires: null });
    return (row.state_expires ?? 0) > now ? row : undefined;
  }

  /** Forgets the table handle (after `lifecycle.destroy()` wiped the storage). */
  reset(): void {
    this.#sql = undefined;
  }
}

/** @throws DokitError RECORD_TOO_LARGE when the text columns of `row` come to more than {@link MAX_RECORD_BYTES} UTF-8 bytes */
function checkSize(row: Partial<ServerRow>): void {
  let bytes = 0;
  for (const value of Object.values(row)) if (typeof value === "string") bytes += utf8Length(value);
  if (bytes > MAX_RECORD_BYTES) {
    throw new DokitError<McpClientErrorCode>(
      "RECORD_TOO_LARGE",
      `McpClients: the stored record of server "${row.id}" would be ${bytes} bytes (its name, URL, headers and OAuth data), ` +
        `more than the ${MAX_RECORD_BYTES} allowed (MAX_RECORD_BYTES; SQLite in a Durable Object stores at most 2 MB per row). Nothing was stored.`,
    );
  }
}
