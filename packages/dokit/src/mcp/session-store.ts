import { EVENTS_TABLE, SESSIONS_TABLE, type Tables } from "./tables";

// The rows of 2025-era sessions: what a session needs after a wake (its
// `initialize` params and resource subscriptions) and when it was last used.

/** A stored session as the legacy lane restores it. */
export interface StoredSession {
  /** The client's `initialize` params. */
  init: unknown;
  /** Resource URIs the client subscribed to. */
  subscriptions: string[];
}

type Row = { id: string; init: string; subscriptions: string; last_seen: number };

/** The session rows of one McpHandler, in the object's SQLite storage. */
export class SessionStore {
  readonly #tables: Tables;

  /** @param tables - the capability's tables (created on first use) */
  constructor(tables: Tables) {
    this.#tables = tables;
  }

  /** @returns the stored session, or `undefined` when there is none with this id */
  load(id: string): StoredSession | undefined {
    const row = this.#tables.created().exec<Row>(`SELECT * FROM ${SESSIONS_TABLE} WHERE id = ?`, id).toArray()[0];
    if (!row) return undefined;
    // SAFETY: both columns only ever hold JSON written by `save` and `saveSubscriptions`.
    return { init: JSON.parse(row.init), subscriptions: JSON.parse(row.subscriptions) as string[] };
  }

  /** Stores a new session (or replaces the row of the same id). */
  save(id: string, init: unknown, subscriptions: Iterable<string>): void {
    this.#tables.created().exec(
      `INSERT OR REPLACE INTO ${SESSIONS_TABLE} (id, init, subscriptions, last_seen) VALUES (?, ?, ?, ?)`,
      id,
      JSON.stringify(init ?? {}),
      JSON.stringify([...subscriptions]),
      Date.now(),
    );
  }

  /** Replaces a session's resource subscriptions. */
  saveSubscriptions(id: string, subscriptions: Iterable<string>): void {
    this.#tables.created().exec(`UPDATE ${SESSIONS_TABLE} SET subscriptions = ? WHERE id = ?`, JSON.stringify([...subscriptions]), id);
  }

  /** Records when a session was last used. */
  touch(id: string, at: number): void {
    this.#tables.created().exec(`UPDATE ${SESSIONS_TABLE} SET last_seen = ? WHERE id = ?`, at, id);
  }

  /**
   * Deletes sessions last used before `before`, with their events.
   * @param keep - ids to leave alone (sessions live in memory)
   */
  deleteUnusedSince(before: number, keep: (id: string) => boolean): void {
    const sql = this.#tables.created();
    const stale = sql.exec<{ id: string }>(`SELECT id FROM ${SESSIONS_TABLE} WHERE last_seen < ?`, before).toArray();
    for (const { id } of stale) {
      if (keep(id)) continue;
      sql.exec(`DELETE FROM ${EVENTS_TABLE} WHERE session = ?`, id);
      sql.exec(`DELETE FROM ${SESSIONS_TABLE} WHERE id = ?`, id);
    }
  }

  /** Deletes a session's row (its events are cleared by its event store). */
  delete(id: string): void {
    this.#tables.created().exec(`DELETE FROM ${SESSIONS_TABLE} WHERE id = ?`, id);
  }
}
