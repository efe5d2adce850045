import type { ShardReport } from "./types";

/** One registered shard, as the sequencer keeps it. */
export type Member = {
  /** The shard's object name. */
  name: string;
  /** The binding its class is bound to (`env[binding]`). */
  binding: string;
  /** The last seq the shard confirmed it sent its clients. */
  cursor: number;
  /** Its open connections, as last reported. */
  connections: number;
  /** Deliveries that failed in a row (backs off the retries). */
  failures: number;
};

/** What the sequencer is told of its members. */
export interface SequencerMembersEvents {
  /** A shard left, or was unregistered. */
  left?(name: string): void;
  /** A delivery's answer changed a shard's connection count (reports and joins are counted by their callers). */
  counted?(): void;
}

/**
 * The shards of a room that have clients, in the sequencer's SQLite storage: where each one's
 * deliveries stand, and its connection count (their sum is the room-wide count).
 */
export class SequencerMembers {
  readonly #sql: SqlStorage;
  readonly #told: SequencerMembersEvents;
  #count: number | undefined;

  /** @param told - told of shards that leave, and of counts that a delivery's answer changed */
  constructor(sql: SqlStorage, told: SequencerMembersEvents = {}) {
    this.#sql = sql;
    this.#told = told;
    sql.exec(`CREATE TABLE IF NOT EXISTS dokit_room_shards (
      name TEXT PRIMARY KEY, binding TEXT NOT NULL, cursor INTEGER NOT NULL, connections INTEGER NOT NULL, failures INTEGER NOT NULL DEFAULT 0)`);
  }

  /** Registers a shard (again) with its deliveries standing at `cursor`. */
  join(shard: ShardReport, cursor: number): void {
    this.#sql.exec(
      `INSERT INTO dokit_room_shards (name, binding, cursor, connections, failures) VALUES (?, ?, ?, ?, 0)
       ON CONFLICT (name) DO UPDATE SET binding = excluded.binding, cursor = excluded.cursor, connections = excluded.connections, failures = 0`,
      shard.name,
      shard.binding,
      cursor,
      shard.connections,
    );
    this.#count = undefined;
  }

  leave(name: string): void {
    this.#sql.exec("DELETE FROM dokit_room_shards WHERE name = ?", name);
    this.#count = undefined;
    this.#told.left?.(name);
  }

  /** Records a shard's connection count. @returns whether the shard is registered */
  report(shard: ShardReport): boolean {
    const changed = this.#sql.exec("UPDATE dokit_room_shards SET connections = ? WHERE name = ? RETURNING name", shard.connections, shard.name).toArray();
    this.#count = undefined;
    return changed.length > 0;
  }

  /** A delivery went through: the shard's cursor moves to what it confirmed (never back). */
  advance(name: string, delivered: number, connections: number): void {
    const counted = this.#sql.exec("UPDATE dokit_room_shards SET connections = ? WHERE name = ? AND connections != ? RETURNING name", connections, name, connections).toArray().length > 0;
    this.#sql.exec("UPDATE dokit_room_shards SET cursor = max(cursor, ?), failures = 0 WHERE name = ?", delivered, name);
    this.#count = undefined;
    // The shard's answer brought a count its reports have not: the room-wide count changed.
    if (counted) this.#told.counted?.();
  }

  /** A delivery failed. @returns the failures in a row */
  failed(name: string): number {
    this.#sql.exec("UPDATE dokit_room_shards SET failures = failures + 1 WHERE name = ?", name);
    return this.get(name)?.failures ?? 0;
  }

  /** @returns the shard registered under `name`, if any */
  get(name: string): Member | undefined {
    return this.#sql.exec<Member>("SELECT * FROM dokit_room_shards WHERE name = ?", name).toArray()[0];
  }

  /** @returns the shards whose deliveries stand before `head` */
  behind(head: number): Member[] {
    return this.#sql.exec<Member>("SELECT * FROM dokit_room_shards WHERE cursor < ?", head).toArray();
  }

  /** @returns every registered shard */
  all(): Member[] {
    return this.#sql.exec<Member>("SELECT * FROM dokit_room_shards").toArray();
  }

  /** @returns how many shards are registered */
  size(): number {
    return this.#sql.exec<{ n: number }>("SELECT count(*) AS n FROM dokit_room_shards").one().n;
  }

  /** @returns whether any shard is registered */
  any(): boolean {
    return this.#sql.exec("SELECT 1 FROM dokit_room_shards LIMIT 1").toArray().length > 0;
  }

  /** The room-wide connection count: the sum of the shards' last reports. */
  get count(): number {
    return (this.#count ??= this.#sql.exec<{ n: number | null }>("SELECT sum(connections) AS n FROM dokit_room_shards").one().n ?? 0);
  }
}
