import { DokitError } from "../lifecycle/errors";

// The State's one row, in a table it owns. Created lazily: a wake that never
// touches state runs no SQL at all.
const TABLE = "dokit_state";
const ROW_ID = "state";
// The reference implementation's table and row (agents/state): adopted once.
const REFERENCE_TABLE = "cf_agents_state";
const REFERENCE_ROW_ID = "cf_state_row_id";

/** A row read from storage: its raw `value` column, or `undefined` when there is no row. */
export type StoredRow = { value: unknown } | undefined;

/** Reads and writes the State's row in the object's SQLite storage (synchronous). */
export class StateStore {
  readonly #ctx: DurableObjectState;
  #sql: SqlStorage | undefined;

  /** @param ctx - the object's state; nothing is read until first use */
  constructor(ctx: DurableObjectState) {
    this.#ctx = ctx;
  }

  /** @returns the stored row, or `undefined` when the state was never written */
  read(): StoredRow {
    const row = this.#table().exec(`SELECT value FROM ${TABLE} WHERE id = ?`, ROW_ID).toArray()[0];
    return row ? { value: row.value } : undefined;
  }

  /** @returns the reference implementation's state row (`cf_agents_state`), when that table exists and holds one */
  readReference(): StoredRow {
    const sql = this.#table();
    const exists = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", REFERENCE_TABLE).toArray();
    if (exists.length === 0) return undefined;
    const row = sql.exec(`SELECT state FROM ${REFERENCE_TABLE} WHERE id = ?`, REFERENCE_ROW_ID).toArray()[0];
    return row ? { value: row.state } : undefined;
  }

  /** Replaces the stored state with `json`. */
  write(json: string): void {
    this.#table().exec(`INSERT OR REPLACE INTO ${TABLE} (id, value) VALUES (?, ?)`, ROW_ID, json);
  }

  #table(): SqlStorage {
    if (this.#sql) return this.#sql;
    let sql: SqlStorage;
    try {
      // A class bound without SQLite fails here: on reading `sql`, or on its first statement.
      sql = this.#ctx.storage.sql;
      sql.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (id TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)`);
    } catch (error) {
      throw new DokitError(
        "NO_SQLITE",
        'State stores its value in SQLite: bind this class in "new_sqlite_classes" (not "new_classes") in its wrangler migration',
        { cause: error },
      );
    }
    this.#sql = sql;
    return sql;
  }
}
