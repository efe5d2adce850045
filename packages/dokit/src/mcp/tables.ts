// The two SQLite tables McpHandler owns in the object's storage, created on
// first use (an object that never sees a 2025-era session never creates them).

/** 2025-era sessions: what a session needs after a wake. */
export const SESSIONS_TABLE = "_dokit_mcp_sessions";
/** Resumability: outgoing SSE events per session and stream. */
export const EVENTS_TABLE = "_dokit_mcp_events";

/** Lazily creates the capability's tables; one per McpHandler. */
export class Tables {
  /** The object's SQL storage. */
  readonly sql: SqlStorage;
  #created = false;

  /** @param sql - the object's `ctx.storage.sql` (needs a SQLite-backed class) */
  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  /** Creates both tables on first use. @returns the SQL storage */
  created(): SqlStorage {
    if (this.#created) return this.sql;
    this.sql.exec(
      `CREATE TABLE IF NOT EXISTS ${SESSIONS_TABLE} (
         id TEXT PRIMARY KEY,
         init TEXT NOT NULL,
         subscriptions TEXT NOT NULL DEFAULT '[]',
         last_seen INTEGER NOT NULL
       )`,
    );
    this.sql.exec(
      `CREATE TABLE IF NOT EXISTS ${EVENTS_TABLE} (
         id INTEGER PRIMARY KEY AUTOINCREMENT,
         session TEXT NOT NULL,
         stream TEXT NOT NULL,
         message TEXT NOT NULL
       )`,
    );
    this.sql.exec(`CREATE INDEX IF NOT EXISTS ${EVENTS_TABLE}_by_stream ON ${EVENTS_TABLE} (session, stream, id)`);
    this.#created = true;
    return this.sql;
  }

  /** Forgets that the tables exist (after `lifecycle.destroy()` wiped the storage). */
  reset(): void {
    this.#created = false;
  }
}
