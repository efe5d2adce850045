import { utf8Length } from "../lifecycle/wire";
import { parseShardName } from "./names";
import type { PresenceKnown, PresenceNews, PresenceUpdate } from "./types";

/** The room-wide bounds of presence the sequencer holds. */
export interface PresenceLimits {
  /** The most entries (present connections) room-wide. */
  entries: number;
  /** The most bytes of ids and values (as JSON) room-wide. */
  bytes: number;
}

/** One shard's entries, as the sequencer holds them. */
interface ShardSet {
  entries: Map<string, string>;
  bytes: number;
  /** The room-wide version at which this set last changed. */
  changed: number;
  /** The shard's stream of updates: its instance's `gen` and the last `n` applied (unset: the next must be whole). */
  gen?: string;
  n?: number;
}

/**
 * Room-wide presence in the sequencer's memory: each shard's present connections, as its updates
 * said. Every change moves one room-wide version on and marks the shard that changed, so news for a
 * shard is the whole set of each shard that changed since the version it had. Kept in memory only:
 * a new instance has a new `instance` name, and shards send it their whole sets again when they see it.
 */
export class RoomPresence {
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
  #warned = false;

  constructor(limits: PresenceLimits) {
    this.#limits = limits;
  }

  /** @returns whether any shard has sent presence to this instance (deliveries then carry news) */
  get used(): boolean {
    return this.#shards.size > 0;
  }

  /**
   * Applies a shard's update: a whole set always, changes only right after the update before them.
   * Entries past the room's limits are left out (logged once): they reach the room with a later
   * whole set of their shard, once there is room.
   * @returns whether it was applied (else the shard must send its whole set)
   */
  update(name: string, update: PresenceUpdate): boolean {
    const index = String(parseShardName(name).index);
    let shard = this.#shards.get(index);
    if (!update.full && (shard?.gen !== update.gen || shard.n !== update.n - 1)) return false;
    if (!shard) this.#shards.set(index, (shard = { entries: new Map(), bytes: 0, changed: 0 }));
    if (update.full) for (const id of [...shard.entries.keys()]) this.#delete(shard, id);
    for (const id of update.left) this.#delete(shard, id);
    let cut = false;
    for (const [id, json] of update.set) if (!this.#put(shard, id, json)) cut = true;
    shard.gen = update.gen;
    shard.n = update.n;
    // A cut set is sent whole again at the shard's next change, when there may be room.
    if (cut) {
      shard.gen = undefined;
      if (!this.#warned) {
        this.#warned = true;
        console.warn(`dokit: a room's presence is over its limits (${this.#limits.entries} entries, ${this.#limits.bytes} bytes): entries past them stay on their own shard`);
      }
    }
    shard.changed = ++this.#version;
    return true;
  }

  /** A shard left the room (or was unregistered): its entries go, and every shard is told. @returns whether it had any */
  drop(name: string): boolean {
    const shard = this.#shards.get(String(parseShardName(name).index));
    this.#sent.delete(name);
    if (!shard) return false;
    shard.gen = undefined;
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
    for (const [index, shard] of this.#shards) if (since === undefined || shard.changed > since) shards[index] = [...shard.entries];
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
