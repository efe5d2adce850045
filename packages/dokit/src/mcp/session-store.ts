import { EVENT_PARTS_TABLE, EVENTS_TABLE, SESSIONS_TABLE, type Tables } from "./tables";

// The rows of 2025-era sessions: what a session needs after a wake (its
// `initialize` params and resource subscriptions), whose it is (the digest of
// the identity it was created under) and when it was last used.

/** A stored session as the legacy lane restores it. */
export interface StoredSession {
  /** The client's `initialize` params. */
  init: unknown;
  /** Resource URIs the client subscribed to. */
  subscriptions: string[];
  /** The identity the session was created under. */
  owner: string;
  /** When the session was last used (ms since the epoch). */
  lastSeen: number;
}

type Row = { id: string; init: string; subscriptions: string; last_seen: number; owner: string };

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
    return {
      init: JSON.parse(row.init),
      // SAFETY: the column only ever holds JSON written by `save` and `saveSubscriptions`.
      subscriptions: JSON.parse(row.subscriptions) as string[],
      owner: row.owner,
      lastSeen: row.last_seen,
    };
  }

  /**
   * Stores a new session (or replaces the row of the same id).
   * @param init - the `initialize` params, already serialized (their size was checked)
   */
  save(id: string, init: string, subscriptions: Iterable<string>, owner: string): void {
    this.#tables.created().exec(
      `INSERT OR REPLACE INTO ${SESSIONS_TABLE} (id, init, subscriptions, last_seen, owner) VALUES (?, ?, ?, ?, ?)`,
      id,
      init,
      JSON.stringify([...subscriptions]),
      Date.now(),
      owner,
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

  /** @returns the ids of sessions last used before `before` */
  unusedSince(before: number): string[] {
    const sql = this.#tables.created();
    return sql.exec<{ id: string }>(`SELECT id FROM ${SESSIONS_TABLE} WHERE last_seen < ?`, before).toArray().map((row) => row.id);
  }

  /**
   * @param room - how many sessions must fit beside the kept ones
   * @returns the least recently used sessions that must go so that at most `max - room` remain
   */
  overCap(max: number, room: number): string[] {
    const sql = this.#tables.created();
    const { n } = sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${SESSIONS_TABLE}`).one();
    const excess = n - (max - room);
    if (excess <= 0) return [];
    return sql
      .exec<{ id: string }>(`SELECT id FROM ${SESSIONS_TABLE} ORDER BY last_seen, id LIMIT ?`, excess)
      .toArray()
      .map((row) => row.id);
  }

  /** Deletes a session's row with its events. */
  delete(id: string): void {
    const sql = this.#tables.created();
    sql.exec(`DELETE FROM ${EVENT_PARTS_TABLE} WHERE session = ?`, id);
    sql.exec(`DELETE FROM ${EVENTS_TABLE} WHERE session = ?`, id);
    sql.exec(`DELETE FROM ${SESSIONS_TABLE} WHERE id = ?`, id);
  }
}
