import { utf8Length } from "../utf8/size";
import { parseShardName } from "./names";
import type { PresenceKnown, PresenceNews, PresenceUpdate } from "./types";

/** The room-wide bounds of presence the sequencer holds. */
export interface PresenceLimits {
  /** The most entries (present connections) room-wide. */
  entries: number;
  /** The most bytes of ids and values (as JSON) room-wide. */
  bytes: number;
}

/** The parts of a shard's update received so far, held aside until its last part arrives. */
interface Staged {
  full: boolean;
  set: Map<string, string>;
  left: Set<string>;
  /** Some entries were left out (the held parts reached the room's limits). */
  cut: boolean;
}

/** One shard's entries, as the sequencer holds them. */
interface ShardSet {
  entries: Map<string, string>;
  bytes: number;
  /** The room-wide version at which this set last changed. */
  changed: number;
  /** The shard's stream of updates: its instance's `gen` and the last `n` received (unset: the next must be whole). */
  gen?: string;
  n?: number;
  /** The parts of an update in several parts received so far. */
  staged?: Staged;
}

/**
 * Room-wide presence in the sequencer's memory: each shard's present connections, as its updates
 * said. Every change moves one room-wide version on and marks the shard that changed, so news for a
 * shard is the whole set of each shard that changed since the version it had. Kept in memory only:
 * a new instance has a new `instance` name, and shards send it their whole sets again when they see it.
 * An update that came in parts is held aside until its last part, then applied as one: the room
 * never sees half of a shard's set. What is held aside is bounded by the room's limits too (all
 * shards together), so the sequencer holds at most twice `presenceBytes` of entries.
 */
export class SequencerPresence {
  /** Names this instance: a shard that sees another knows the sequencer restarted (and lost its sets). */
  readonly instance = crypto.randomUUID();
  readonly #limits: PresenceLimits;
  /** By shard index. */
  readonly #shards = new Map<string, ShardSet>();
  /** By shard name: the version of the last news sent to it (taken as received; a shard that missed it asks again). */
  readonly #sent = new Map<string, number>();
  #version = 0;
  #entries = 0;
  #bytes = 0;
  /** The entries and bytes of every update held aside. */
  #stagedEntries = 0;
  #stagedBytes = 0;
  #warned = false;

  constructor(limits: PresenceLimits) {
    this.#limits = limits;
  }

  /** @returns whether any shard has sent presence to this instance (deliveries then carry news) */
  get used(): boolean {
    // Parts held aside are not presence yet.
    return this.#version > 0;
  }

  /**
   * Applies a shard's update: a whole set always, changes only right after the update before them.
   * A part with `more` is held aside with the parts before it, and applied with the last one.
   * Entries past the room's limits are left out (logged once): they reach the room with a later
   * whole set of their shard, once there is room.
   * @returns whether it was taken (else the shard must send its whole set)
   */
  update(name: string, update: PresenceUpdate): boolean {
    const index = String(parseShardName(name).index);
    let shard = this.#shards.get(index);
    if (!update.full && (shard?.gen !== update.gen || shard.n !== update.n - 1)) {
      // What the shard's stream held aside is dropped with it: its next update must be whole.
      if (shard?.staged) {
        this.#unstage(shard);
        shard.gen = undefined;
      }
      return false;
    }
    if (!shard) this.#shards.set(index, (shard = { entries: new Map(), bytes: 0, changed: 0 }));
    if (update.full) this.#unstage(shard);
    shard.gen = update.gen;
    shard.n = update.n;
    if (update.more || shard.staged) {
      const staged = this.#stage(shard, update);
      if (update.more) return true;
      this.#unstage(shard);
      this.#apply(shard, staged.full, staged.set, staged.left, staged.cut);
    } else this.#apply(shard, update.full, update.set, update.left, false);
    return true;
  }

  /** Replaces or patches a shard's set, and moves the room-wide version on. */
  #apply(shard: ShardSet, full: boolean, set: Iterable<[string, string]>, left: Iterable<string>, cut: boolean): void {
    if (full) for (const id of [...shard.entries.keys()]) this.#delete(shard, id);
    for (const id of left) this.#delete(shard, id);
    for (const [id, json] of set) if (!this.#put(shard, id, json)) cut = true;
    // A cut set is sent whole again at the shard's next change, when there may be room.
    if (cut) {
      shard.gen = undefined;
      if (!this.#warned) {
        this.#warned = true;
        console.warn(`dokit: a room's presence is over its limits (${this.#limits.entries} entries, ${this.#limits.bytes} bytes): entries past them stay on their own shard`);
      }
    }
    shard.changed = ++this.#version;
  }

  /** Adds a part to what the shard's update holds aside (entries past the room's limits are left out, and the update is cut). @returns what it holds */
  #stage(shard: ShardSet, update: PresenceUpdate): Staged {
    const staged = (shard.staged ??= { full: update.full, set: new Map(), left: new Set(), cut: false });
    for (const id of update.left) {
      this.#unstageEntry(staged, id);
      staged.left.add(id);
    }
    for (const [id, json] of update.set) {
      this.#unstageEntry(staged, id);
      const bytes = utf8Length(id) + utf8Length(json);
      if (this.#stagedEntries >= this.#limits.entries || this.#stagedBytes + bytes > this.#limits.bytes) {
        // Left out: gone from the shard's set when it is applied, and sent again with its next whole set.
        staged.left.add(id);
        staged.cut = true;
        continue;
      }
      staged.left.delete(id);
      staged.set.set(id, json);
      this.#stagedEntries++;
      this.#stagedBytes += bytes;
    }
    return staged;
  }

  #unstageEntry(staged: Staged, id: string): void {
    const old = staged.set.get(id);
    if (old === undefined) return;
    staged.set.delete(id);
    this.#stagedEntries--;
    this.#stagedBytes -= utf8Length(id) + utf8Length(old);
  }

  /** Takes what a shard's update held aside out of the count of held entries. @returns it, if any */
  #unstage(shard: ShardSet): Staged | undefined {
    const staged = shard.staged;
    if (!staged) return undefined;
    shard.staged = undefined;
    this.#stagedEntries -= staged.set.size;
    for (const [id, json] of staged.set) this.#stagedBytes -= utf8Length(id) + utf8Length(json);
    return staged;
  }

  /** A shard left the room (or was unregistered): its entries go, and every shard is told. @returns whether it had any */
  drop(name: string): boolean {
    const shard = this.#shards.get(String(parseShardName(name).index));
    this.#sent.delete(name);
    if (!shard) return false;
    shard.gen = undefined;
    this.#unstage(shard);
    if (shard.entries.size === 0) return false;
    for (const id of [...shard.entries.keys()]) this.#delete(shard, id);
    shard.changed = ++this.#version;
    return true;
  }

  /** @returns the news for shard `name`, which says it knows `known` (or `null`), and records it as sent */
  answer(name: string, known: PresenceKnown | null): PresenceNews {
    const since = known?.instance === this.instance ? known.version : undefined;
    this.#sent.set(name, this.#version);
    return this.#news(since);
  }

  /** @returns the news one delivery to `names` carries (from the version the furthest behind had), or none when no shard uses presence */
  forDelivery(names: readonly string[]): PresenceNews | undefined {
    if (!this.used) return undefined;
    let since: number | undefined = this.#version;
    for (const name of names) {
      const sent = this.#sent.get(name);
      since = sent === undefined || since === undefined ? undefined : Math.min(since, sent);
      this.#sent.set(name, this.#version);
    }
    return this.#news(since);
  }

  /** @returns the whole sets of the shards that changed after `since` (every shard without it) */
  #news(since: number | undefined): PresenceNews {
    const news: PresenceNews = { instance: this.instance, version: this.#version };
    if (since !== undefined) {
      news.since = since;
      if (since >= this.#version) return news;
    }
    const shards: Record<string, [string, string][]> = {};
    // A shard whose first update is still held aside (changed 0) is not listed: listed, it would read as empty.
    for (const [index, shard] of this.#shards) if (shard.changed > (since ?? 0)) shards[index] = [...shard.entries];
    news.shards = shards;
    return news;
  }

  /** @returns whether the entry fits the room's limits (and was put) */
  #put(shard: ShardSet, id: string, json: string): boolean {
    const old = shard.entries.get(id);
    const grow = utf8Length(id) + utf8Length(json) - (old === undefined ? 0 : utf8Length(id) + utf8Length(old));
    if ((old === undefined && this.#entries >= this.#limits.entries) || this.#bytes + grow > this.#limits.bytes) return false;
    if (old === undefined) this.#entries++;
    this.#bytes += grow;
    shard.bytes += grow;
    shard.entries.set(id, json);
    return true;
  }

  #delete(shard: ShardSet, id: string): void {
    const old = shard.entries.get(id);
    if (old === undefined) return;
    shard.entries.delete(id);
    const bytes = utf8Length(id) + utf8Length(old);
    this.#entries--;
    this.#bytes -= bytes;
    shard.bytes -= bytes;
  }
}
