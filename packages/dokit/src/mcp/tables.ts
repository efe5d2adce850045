// The SQLite tables McpHandler owns in the object's storage, created on
// first use (an object that never sees a 2025-era session never creates them).

/** 2025-era sessions: what a session needs after a wake, whose it is, when it was last used. */
export const SESSIONS_TABLE = "_dokit_mcp_sessions";
/** Resumability: outgoing SSE events per session and stream. */
export const EVENTS_TABLE = "_dokit_mcp_events";
/** The pieces of events too large for one SQLite row (`message` is `''` in their event row). */
export const EVENT_PARTS_TABLE = "_dokit_mcp_event_parts";

/** Lazily creates the capability's tables; one per McpHandler. */
export class Tables {
  /** The object's storage (for synchronous transactions). */
  readonly storage: DurableObjectStorage;
  #created = false;

  /** @param storage - the object's `ctx.storage` (needs a SQLite-backed class) */
  constructor(storage: DurableObjectStorage) {
    this.storage = storage;
  }

  /** The object's SQL storage, without creating anything. */
  get sql(): SqlStorage {
    return this.storage.sql;
  }

  /** Creates the tables on first use. @returns the SQL storage */
  created(): SqlStorage {
    const sql = this.storage.sql;
    if (this.#created) return sql;
    sql.exec(
      `CREATE TABLE IF NOT EXISTS ${SESSIONS_TABLE} (
         id TEXT PRIMARY KEY,
         init TEXT NOT NULL,
         subscriptions TEXT NOT NULL DEFAULT '[]',
         last_seen INTEGER NOT NULL,
         owner TEXT NOT NULL DEFAULT ''
       )`,
    );
    // A table made before sessions were bound to their user gains the column; its rows
    // belong to nobody (''), so they keep serving requests made without props.
    const columns = sql.exec<{ name: string }>(`PRAGMA table_info(${SESSIONS_TABLE})`).toArray();
    if (!columns.some((column) => column.name === "owner")) {
      sql.exec(`ALTER TABLE ${SESSIONS_TABLE} ADD COLUMN owner TEXT NOT NULL DEFAULT ''`);
    }
    sql.exec(`CREATE INDEX IF NOT EXISTS ${SESSIONS_TABLE}_by_last_seen ON ${SESSIONS_TABLE} (last_seen)`);
    sql.exec(
      `CREATE TABLE IF NOT EXISTS ${EVENTS_TABLE} (
         id INTEGER PRIMARY KEY AUTOINCREMENT,
         session TEXT NOT NULL,
         stream TEXT NOT NULL,
         message TEXT NOT NULL
       )`,
    );
    sql.exec(`CREATE INDEX IF NOT EXISTS ${EVENTS_TABLE}_by_stream ON ${EVENTS_TABLE} (session, stream, id)`);
    sql.exec(
      `CREATE TABLE IF NOT EXISTS ${EVENT_PARTS_TABLE} (
         event INTEGER NOT NULL,
         n INTEGER NOT NULL,
         session TEXT NOT NULL,
         stream TEXT NOT NULL,
         part BLOB NOT NULL,
         PRIMARY KEY (event, n)
       )`,
    );
    sql.exec(`CREATE INDEX IF NOT EXISTS ${EVENT_PARTS_TABLE}_by_stream ON ${EVENT_PARTS_TABLE} (session, stream, event)`);
    this.#created = true;
    return sql;
  }

  /** Forgets that the tables exist (after `lifecycle.destroy()` wiped the storage). */
  reset(): void {
    this.#created = false;
  }
}
