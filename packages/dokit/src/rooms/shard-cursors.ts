/**
 * Where each connection of a shard stands when it is not simply live. A connection is live (no
 * entry) when it receives every message the shard delivers. It is held while it joins or catches up
 * (`pending`: live messages skip it, its catch-up sends them), and after a catch-up that went past
 * the shard's own deliveries it has a floor (`at`: messages up to it were sent, so they are skipped).
 * A floor is never past the room's head (a catch-up reads it from the sequencer's log), so it lasts
 * only until the shard's next delivery. Catch-ups and floors are stored, one small value per
 * connection (a write per change, whatever the number of connections), so a shard woken after an
 * eviction resumes them.
 */
export interface Cursor {
  /** The last seq sent to the connection. */
  at: number;
  /** Whether live messages skip it (it joins or catches up). */
  pending: boolean;
}

/** The prefix of a stored cursor's key; the connection's id follows. */
const PREFIX = "__dokit_room_cursor:";
/** Where all cursors were stored as one value (read once, then removed). */
const OLD_KEY = "__dokit_room_cursors";

export class Cursors {
  readonly #storage: DurableObjectStorage;
  readonly #map = new Map<string, Cursor>();
  /** Ids whose entry is stored (the rest are joins, which a reset ends anyway). */
  readonly #stored = new Set<string>();

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  /** Reads the stored catch-ups and floors. @returns them, by connection id */
  async load(): Promise<Map<string, Cursor>> {
    const stored = new Map<string, Cursor>();
    const old = await this.#storage.get<Record<string, Cursor>>(OLD_KEY);
    for (const [id, cursor] of Object.entries(old ?? {})) stored.set(id, cursor);
    for (const [key, cursor] of await this.#storage.list<Cursor>({ prefix: PREFIX })) stored.set(key.slice(PREFIX.length), cursor);
    const found = new Map<string, Cursor>();
    for (const [id, cursor] of stored) {
      // A connection that joined meanwhile is this instance's own.
      if (this.#map.has(id)) continue;
      this.#map.set(id, cursor);
      this.#stored.add(id);
      found.set(id, cursor);
      if (old) void this.#storage.put(PREFIX + id, cursor);
    }
    if (old) void this.#storage.delete(OLD_KEY);
    return found;
  }

  /** Whether no connection is held or has a floor: every live message goes to every connection. */
  get empty(): boolean {
    return this.#map.size === 0;
  }

  /** @returns whether the live message `seq` goes to connection `id` */
  wants(id: string, seq: number): boolean {
    if (this.#map.size === 0) return true;
    const cursor = this.#map.get(id);
    return !cursor || (!cursor.pending && seq > cursor.at);
  }

  /** @returns whether connection `id` is joining (held, its welcome not yet sent) */
  joining(id: string): boolean {
    return this.#map.get(id)?.pending === true && !this.#stored.has(id);
  }

  /** Holds a connection out of live messages while it joins (`store`: false) or catches up after `at`. */
  hold(id: string, at: number, store: boolean): void {
    const cursor = { at, pending: true };
    this.#map.set(id, cursor);
    if (store) this.#store(id, cursor);
  }

  /** The connection is live after `at`: with a floor when the shard's deliveries are behind it, else no entry. */
  release(id: string, at: number, delivered: number): void {
    if (at > delivered) {
      const cursor = { at, pending: false };
      this.#map.set(id, cursor);
      this.#store(id, cursor);
    } else this.drop(id);
  }

  /** Forgets a connection (it closed, or it is simply live). */
  drop(id: string): void {
    if (!this.#map.delete(id)) return;
    // Not awaited: the output gate holds what the shard sends until the write is durable.
    if (this.#stored.delete(id)) void this.#storage.delete(PREFIX + id);
  }

  /** The shard delivered up to `delivered`: floors at or below it are no longer needed. */
  passed(delivered: number): void {
    for (const [id, cursor] of this.#map) if (!cursor.pending && cursor.at <= delivered) this.drop(id);
  }

  #store(id: string, cursor: Cursor): void {
    this.#stored.add(id);
    // Not awaited: the output gate holds what the shard sends until the write is durable.
    void this.#storage.put(PREFIX + id, cursor);
  }
}
