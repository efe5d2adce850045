import { DokitError } from "../lifecycle/errors";
import type { StateErrorCode } from "./errors";

// The State's row, in a table it owns. Created lazily: a wake that never
// touches state runs no SQL at all. The row holds the value's JSON, or, for a
// value too large for one row (rows.ts), a marker `dokit:parts:<count>:<length>`
// (never valid JSON) while the JSON's parts sit in rows `state:0000`, `state:0001`, ….
// A marker and its parts are written in one transaction; part rows under a
// plain row are never read (a write drops them).
const TABLE = "dokit_state";
const ROW_ID = "state";
const MARKER = "dokit:parts:";
const PART_PREFIX = "state:";
// The part rows' id range: every id that starts with "state:" (";" follows ":").
const PARTS = `id >= '${PART_PREFIX}' AND id < 'state;'`;
// The reference implementation's table and row (agents/state): adopted once.
const REFERENCE_TABLE = "cf_agents_state";
const REFERENCE_ROW_ID = "cf_state_row_id";

/**
 * A value read from storage: its raw `value` column (the parts joined), or
 * `undefined` when there is no row; `corrupt` says why parts cannot be joined.
 */
export type StoredRow = { value: unknown; corrupt?: string } | undefined;

/** Reads and writes the State's row in the object's SQLite storage (synchronous). */
export class StateStore {
  readonly #ctx: DurableObjectState;
  #sql: SqlStorage | undefined;
  // Whether part rows may exist: unknown until the state is read or written in this instance.
  #parted: boolean | undefined;

  /** @param ctx - the object's state; nothing is read until first use */
  constructor(ctx: DurableObjectState) {
    this.#ctx = ctx;
  }

  /** @returns the stored value (one query unless it is split across rows), or `undefined` when the state was never written */
  read(): StoredRow {
    const row = this.#table().exec(`SELECT value FROM ${TABLE} WHERE id = ?`, ROW_ID).toArray()[0];
    const value = row?.value;
    this.#parted = typeof value === "string" && value.startsWith(MARKER);
    if (!row) return undefined;
    return typeof value === "string" && this.#parted ? this.#join(value) : { value };
  }

  /** @returns the parts the marker names, joined, or why they cannot be */
  #join(marker: string): StoredRow {
    const [count, length] = marker.slice(MARKER.length).split(":").map(Number);
    const parts = this.#table().exec(`SELECT value FROM ${TABLE} WHERE ${PARTS} ORDER BY id`).toArray();
    const value = parts.every((part) => typeof part.value === "string") ? parts.map((part) => part.value).join("") : undefined;
    if (parts.length !== count || value?.length !== length) {
      return { value: undefined, corrupt: `the marker names ${count} parts of ${length} characters; found ${parts.length} parts` };
    }
    return { value };
  }

  /** @returns the reference implementation's state row (`cf_agents_state`), when that table exists and holds one */
  readReference(): StoredRow {
    const sql = this.#table();
    const exists = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", REFERENCE_TABLE).toArray();
    if (exists.length === 0) return undefined;
    const row = sql.exec(`SELECT state FROM ${REFERENCE_TABLE} WHERE id = ?`, REFERENCE_ROW_ID).toArray()[0];
    return row ? { value: row.state } : undefined;
  }

  /**
   * Replaces the stored state with its JSON cut into `parts` (rows.ts), never
   * leaving a mix of old and new: parts are written with their marker in one
   * transaction; a single part replaces the row first, then drops any part rows
   * (part rows under a plain row are never read), and is one statement when
   * this instance knows there are none.
   */
  write(parts: string[]): void {
    const sql = this.#table();
    const replace = `INSERT OR REPLACE INTO ${TABLE} (id, value) VALUES (?, ?)`;
    if (parts.length === 1) {
      sql.exec(replace, ROW_ID, parts[0]);
      if (this.#parted !== false) sql.exec(`DELETE FROM ${TABLE} WHERE ${PARTS}`);
      this.#parted = false;
      return;
    }
    let length = 0;
    this.#ctx.storage.transactionSync(() => {
      sql.exec(`DELETE FROM ${TABLE} WHERE ${PARTS}`);
      parts.forEach((part, index) => {
        sql.exec(replace, PART_PREFIX + String(index).padStart(4, "0"), part);
        length += part.length;
      });
      sql.exec(replace, ROW_ID, `${MARKER}${parts.length}:${length}`);
    });
    this.#parted = true;
  }

  #table(): SqlStorage {
    if (this.#sql) return this.#sql;
    let sql: SqlStorage;
    try {
      // A class bound without SQLite fails here: on reading `sql`, or on its first statement.
      sql = this.#ctx.storage.sql;
      sql.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (id TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)`);
    } catch (error) {
      throw new DokitError<StateErrorCode>(
        "NO_SQLITE",
        'State stores its value in SQLite: bind this class in "new_sqlite_classes" (not "new_classes") in its wrangler migration',
        { cause: error },
      );
    }
    this.#sql = sql;
    return sql;
  }
}
