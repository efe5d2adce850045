import type { PresenceLink, Presence } from "../presence/presence";
import { presenceBytes } from "./sizes";
import type { ShardMembership } from "./shard-membership";
import type { PresenceKnown, PresenceNews, PresenceUpdate } from "./types";

/** What a shard's side of room-wide presence needs. */
export interface ShardPresenceOptions {
  /** The shard's Presence (its WebSockets'). */
  presence: Presence;
  /** The shard's standing in its room: its index, its report, whether it is registered, and its sequencer. */
  membership: ShardMembership;
  /** Reads the shard's stored state (once per instance). */
  ready(): Promise<void>;
  /** How long local changes are gathered before they go to the sequencer, in ms (the shard's `countMs`). */
  countMs: number;
  /** The most estimated bytes of entries one call carries (`PRESENCE_PART_BYTES` unless a test lowers it). */
  partBytes: number;
}

/** The most local changes gathered for one update; past them the update sends the whole set. */
const MAX_CHANGES = 1000;

/**
 * A shard's part of room-wide presence. Up: its Presence's changes of each tick are gathered and
 * sent to the sequencer at most once per `countMs` (numbered, so the sequencer notices one it missed
 * and asks for the whole set; a new instance sends its whole set first; an update over `partBytes`
 * goes in parts, one call each, which the sequencer applies together). Down: the sequencer's news
 * (with deliveries, and in answers) replaces the sets of the shards that changed, and the difference
 * goes to the Presence, which sends it to its watchers with its tick. A shard that finds a gap (news
 * from a version after the one it has, a new sequencer instance, or nothing known yet) asks for what
 * it lacks at once. What it holds of other shards lives in memory: a new instance fetches it, and
 * sends its watchers new snapshots.
 */
export class ShardPresence implements PresenceLink {
  readonly #deps: ShardPresenceOptions;
  readonly #gen = crypto.randomUUID();
  #n = 0;
  /** The next update sends the whole set (a new instance, a failed call, or the sequencer asked for it). */
  #full = true;
  readonly #set = new Map<string, string>();
  readonly #left = new Set<string>();
  /** What this shard knows of room-wide presence; `undefined` until its first news. */
  #known: PresenceKnown | undefined;
  /** Whether the next call must send the whole set even without changes (the sequencer lost it). */
  #resend = false;
  /** Whether this instance applied news yet (its watchers' snapshots then hold the room). */
  #applied = false;
  /** The entries of the other shards, by shard index. */
  readonly #others = new Map<string, Map<string, string>>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #calling = false;
  #again = false;

  constructor(deps: ShardPresenceOptions) {
    this.#deps = deps;
    deps.presence.link(this);
  }

  local(set: [string, string][], left: string[]): void {
    for (const [id, json] of set) {
      this.#set.set(id, json);
      this.#left.delete(id);
    }
    for (const id of left) {
      this.#set.delete(id);
      this.#left.add(id);
    }
    if (this.#set.size + this.#left.size > MAX_CHANGES) this.#wholeNext();
    this.#soon(this.#deps.countMs);
  }

  snapshotting(): void {
    if (!this.#known) this.#soon(0);
  }

  /**
   * The shard joined the room: what was gathered meanwhile goes now, and a shard instance that knows
   * nothing of the room asks for it (so its watchers' first snapshots hold the room).
   */
  joined(): void {
    if (this.#full || this.#set.size || this.#left.size || !this.#known) this.#soon(0);
  }

  /** News from a delivery (`undefined`: the sequencer has no presence, so it lost what this shard sent). */
  news(news: PresenceNews | undefined): void {
    if (news) return this.#apply(news);
    if (this.#known) this.#restarted();
  }

  // ------------------------------------------------------------------ inside

  #wholeNext(): void {
    this.#full = true;
    this.#set.clear();
    this.#left.clear();
  }

  #soon(ms: number): void {
    if (this.#calling) return void (this.#again = true);
    if (this.#timer && ms > 0) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#call();
    }, ms);
  }

  /** One call to the sequencer: this shard's changes (if any) and the news since what it knows. */
  async #call(): Promise<void> {
    const deps = this.#deps;
    this.#calling = true;
    try {
      await deps.ready();
    } catch (error) {
      this.#calling = false;
      console.warn("dokit: a room shard could not read its record to send its presence; it sends its whole set next", error);
      this.#wholeNext();
      return this.#soon(deps.countMs);
    }
    // Not in the room (no connection, or joining): the join sends the whole set.
    if (!deps.membership.record.registered) {
      this.#calling = this.#again = false;
      return this.#wholeNext();
    }
    let parts: PresenceUpdate[] = [];
    if (this.#full || this.#set.size || this.#left.size || this.#resend) {
      const full = this.#full || this.#resend;
      parts = this.#parts(full, full ? deps.presence.localEntries() : [...this.#set], full ? [] : [...this.#left]);
      this.#full = this.#resend = false;
      this.#set.clear();
      this.#left.clear();
    }
    /** When the next call goes: at once for a refused change, a count report later for a failure or a refused whole set. */
    let next: number | undefined;
    try {
      // One call per part, in order (none: a call that only asks for news).
      for (const update of parts.length ? parts : [null]) {
        const answer = await deps.membership.sequencer().presence(deps.membership.report(), update, this.#known ?? null);
        this.#apply(answer.news);
        if (answer.resync) {
          this.#wholeNext();
          next = parts[0]?.full ? deps.countMs : 0;
          break;
        }
      }
    } catch (error) {
      console.warn("dokit: a room shard failed to send its presence to the sequencer; it sends its whole set next", error);
      this.#wholeNext();
      // A sequencer that cannot be reached is tried again a count report later, whatever happened meanwhile.
      this.#again = false;
      next = deps.countMs;
    } finally {
      this.#calling = false;
      if (this.#again) next = Math.min(next ?? Infinity, this.#full || this.#set.size || this.#left.size || !this.#known ? 0 : deps.countMs);
      this.#again = false;
      if (next !== undefined) this.#soon(next);
    }
  }

  /**
   * @returns the update as numbered parts of at most `partBytes` of entries each (always at least
   * one entry a part): one part for most updates; only the first may be `full`, and all but the last have `more`
   */
  #parts(full: boolean, set: [string, string][], left: string[]): PresenceUpdate[] {
    const parts: PresenceUpdate[] = [];
    let part: PresenceUpdate = { gen: this.#gen, n: ++this.#n, full, set: [], left: [] };
    let bytes = 0;
    const room = (entry: number) => {
      if (bytes > 0 && bytes + entry > this.#deps.partBytes) {
        parts.push({ ...part, more: true });
        part = { gen: this.#gen, n: ++this.#n, full: false, set: [], left: [] };
        bytes = 0;
      }
      bytes += entry;
    };
    for (const id of left) {
      room(presenceBytes(id));
      part.left.push(id);
    }
    for (const entry of set) {
      room(presenceBytes(entry[0], entry[1]));
      part.set.push(entry);
    }
    parts.push(part);
    return parts;
  }

  /** Applies news, or asks for what is missing when it does not follow what this shard has. */
  #apply(news: PresenceNews): void {
    const known = this.#known;
    const same = known?.instance === news.instance;
    if (same && news.version <= known.version) return;
    if (known && !same) this.#restarted();
    // News after a version this shard lacks (or from a sequencer it knows nothing of): it asks for all of it.
    if (news.since !== undefined && (!same || news.since > (known as PresenceKnown).version)) return this.#soon(0);
    const self = String(this.#deps.membership.index);
    const set: [string, string][] = [];
    const gone: string[] = [];
    // Shards the news does not list keep their entries (after a sequencer restart, until they send theirs to it).
    for (const [index, entries] of Object.entries(news.shards ?? {})) {
      if (index === self) continue;
      const before = this.#others.get(index);
      const after = new Map(entries);
      if (after.size) this.#others.set(index, after);
      else this.#others.delete(index);
      for (const [id, json] of after) if (before?.get(id) !== json) set.push([id, json]);
      if (before) for (const id of before.keys()) if (!after.has(id)) gone.push(id);
    }
    // An id another shard still holds (a connection that moved) stays.
    const left = gone.filter((id) => ![...this.#others.values()].some((entries) => entries.has(id)));
    this.#known = { instance: news.instance, version: news.version };
    if (!this.#applied) {
      // This instance told its watchers nothing of the room yet (a previous one may have): new snapshots.
      this.#applied = true;
      this.#deps.presence.remote(set, left, true);
    } else if (set.length || left.length) this.#deps.presence.remote(set, left);
  }

  /** The sequencer restarted (a new instance, or no presence at all): it is sent this shard's whole set, and asked for the room's. */
  #restarted(): void {
    this.#known = undefined;
    this.#resend = true;
    this.#wholeNext();
    this.#soon(0);
  }
}
