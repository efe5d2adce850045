import { DurableObject } from "cloudflare:workers";
import { DokitError } from "../lifecycle/errors";
import { overBytes } from "../utf8/size";
import type { RoomsErrorCode } from "./errors";
import type { DeliveryHook } from "./deliver";
import { type Fanout, FlatFanout } from "./fanout";
import { TreeFanout, WidthFanout } from "./tree";
import { contentDigest, RoomLog } from "./sequencer-log";
import { SequencerMembers } from "./sequencer-members";
import { MESSAGE_BYTES, outgoingBytes } from "./sizes";
import { SequencerPresence } from "./sequencer-presence";
import type { Joined, LogRange, OutgoingMessage, PresenceAnswer, PresenceKnown, PresenceUpdate, Published, Reported, SequencerApi, ShardReport } from "./types";

/** Options of {@link RoomSequencer} (pass them from a subclass's constructor). */
export interface RoomSequencerOptions {
  /** The newest messages the replay log keeps: 1 to 1,000,000 (default 10,000). */
  logMessages?: number;
  /** How long the replay log keeps a message, in seconds: 1 to 604,800 (default 3,600). */
  logSeconds?: number;
  /** The first retry of a failed delivery, in ms (doubled per failure, at most 60 s): 10 to 60,000 (default 1,000). */
  retryMs?: number;
  /**
   * The most messages one delivery or one `since` answer carries: 1 to 10,000 (default 500). Each also
   * carries at most 8 MiB of messages by a conservative estimate (4 bytes per UTF-16 unit of body,
   * ids and filters), so it stays well under the 32 MiB a call between objects can carry.
   */
  batchLimit?: number;
  /**
   * How soon a change of the room-wide count goes to every shard, in ms: 10 to 60,000 (default 1,000).
   * Changes in that time go out together, one call per shard.
   */
  countMs?: number;
  /**
   * For chaos tests and benches only: called before each delivery to a shard (`"request"`) and after
   * the shard answered (`"answer"`); a hook that throws fails that delivery, as a lost request or a
   * lost answer would (the delivery is retried). Unset by default, and then costs nothing.
   */
  deliveryHook?: DeliveryHook;
  /**
   * The most calls the sequencer, or any relay, makes per delivery: 2 to 1,000 (default 16). A room
   * with more shards delivers through a tree of `RoomRelay` objects (bound as `relays`), each
   * forwarding to at most this many shards or relays.
   */
  fanout?: number;
  /** The name of the `RoomRelay` binding (default `"ROOM_RELAY"`); needed only for rooms of more than `fanout` shards. */
  relays?: string;
  /** The most presence entries (present connections) kept room-wide: 1 to 100,000 (default 1,000); past it, entries stay on their own shard. */
  presenceEntries?: number;
  /**
   * The most bytes of presence ids and values (as JSON, UTF-8) kept room-wide: 1,024 to 2,097,152
   * (default 524,288). Deliveries carry them beside up to 8 MiB of messages: this bound keeps a
   * delivery through relays well under the 32 MiB a call between objects can carry.
   */
  presenceBytes?: number;
}

const MAX_RETRY_MS = 60_000;
/** The largest message body the log takes, in UTF-8 bytes: one row, well under SQLite's 2 MB. */
const MAX_DATA_BYTES = 1_048_576;

/**
 * The room's sequencer: one object per room (named after the room) that gives every message of the
 * room its place in one total order, keeps a bounded replay log, and delivers each message to every
 * shard that has clients, at least once. Re-export it from your Worker and bind it as a SQLite class:
 *
 * ```jsonc
 * { "name": "ROOM_SEQUENCER", "class_name": "RoomSequencer" }   // durable_objects.bindings
 * ```
 * Its methods are called by `RoomShard` and `publishToRoom`, not by application code.
 */
export class RoomSequencer extends DurableObject<object> implements SequencerApi {
  readonly #log: RoomLog;
  readonly #members: SequencerMembers;
  readonly #fanout: Fanout;
  readonly #retryMs: number;
  readonly #limit: number;
  readonly #countMs: number;
  /** Room-wide presence, in memory (shards send theirs again to a new instance). */
  readonly #presence: SequencerPresence;
  #counting: ReturnType<typeof setTimeout> | undefined;
  /** Set once this instance knows an alarm is pending (the alarm retries deliveries). */
  #armed = false;

  /**
   * @param options - the log window, retries and batch limit
   * @throws DokitError INVALID_ARGUMENT for an option out of range
   */
  constructor(ctx: DurableObjectState, env: object, options: RoomSequencerOptions = {}) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    this.#log = new RoomLog(sql, {
      messages: inRange("logMessages", options.logMessages ?? 10_000, 1, 1_000_000),
      ms: inRange("logSeconds", options.logSeconds ?? 3600, 1, 604_800) * 1000,
    });
    this.#presence = new SequencerPresence({
      entries: inRange("presenceEntries", options.presenceEntries ?? 1000, 1, 100_000),
      bytes: inRange("presenceBytes", options.presenceBytes ?? 524_288, 1024, 2_097_152),
    });
    // A shard that leaves, or is unregistered, takes its presence with it.
    this.#members = new SequencerMembers(sql, {
      left: (name) => this.#presence.drop(name) && this.#announceSoon(),
      // A count that came with a delivery's answer is announced like a reported one.
      counted: () => this.#announceSoon(),
    });
    this.#retryMs = inRange("retryMs", options.retryMs ?? 1000, 10, MAX_RETRY_MS);
    this.#limit = inRange("batchLimit", options.batchLimit ?? 500, 1, 10_000);
    this.#countMs = inRange("countMs", options.countMs ?? 1000, 10, 60_000);
    const deps = {
      env,
      log: this.#log,
      members: this.#members,
      key: () => this.#key(),
      limit: this.#limit,
      hook: options.deliveryHook,
      width: inRange("fanout", options.fanout ?? 16, 2, 1000),
      relays: options.relays ?? "ROOM_RELAY",
      presence: (names: readonly string[]) => this.#presence.forDelivery(names),
    };
    const relaysBound = typeof (env as Record<string, { idFromName?: unknown } | undefined>)[deps.relays]?.idFromName === "function";
    this.#fanout = new WidthFanout(new FlatFanout(deps), relaysBound ? new TreeFanout(deps) : undefined, deps);
  }

  /**
   * Registers a shard that has clients. `delivered`: the last seq its clients were sent (a shard that
   * had none passes `null` and starts at the head: its new clients join now). `epoch`: the order that
   * seq counts in; a shard from another epoch (this object lost its storage since) starts at 0, so its
   * clients receive the new order from its first message.
   */
  async join(shard: ShardReport, delivered: number | null, epoch?: string): Promise<Joined> {
    const head = this.#log.head;
    const own = this.#epoch();
    const at = delivered === null ? head : epoch !== undefined && epoch !== own ? 0 : Math.min(Math.max(0, delivered), head);
    const before = this.#members.count;
    this.#members.join(shard, at);
    this.#countChanged(before);
    if (at < head) await this.#deliverSoon();
    return { at, key: this.#key(), epoch: own, count: this.#members.count };
  }

  /** Unregisters a shard whose last client left: it receives nothing until it joins again. */
  async leave(name: string): Promise<void> {
    const before = this.#members.count;
    this.#members.leave(name);
    this.#countChanged(before);
  }

  /** Records a shard's connection count. @returns the room-wide count, and whether the shard is registered */
  async report(shard: ShardReport): Promise<Reported> {
    const before = this.#members.count;
    const registered = this.#members.report(shard);
    this.#countChanged(before);
    return { count: this.#members.count, registered };
  }

  /**
   * Orders a batch (one SQLite transaction: dedup, seqs, log, trim), then delivers it to every shard.
   * @param shard - the publishing shard (its count is recorded), or `null` for the Worker and shards without clients
   * @returns each message's seq, the room-wide count, and whether the shard is registered
   * @throws DokitError INVALID_ARGUMENT for a body over 1 MiB as JSON (nothing of the batch is taken)
   */
  async publish(shard: ShardReport | null, messages: OutgoingMessage[]): Promise<Published> {
    for (const message of messages) {
      if (overBytes(message.data, MAX_DATA_BYTES)) {
        throw new DokitError<RoomsErrorCode>("INVALID_ARGUMENT", `a room message is over ${MAX_DATA_BYTES} bytes as JSON (one row of the log holds it)`);
      }
      // Its ids and filters too: one message always fits in a batch between the room's objects.
      if (outgoingBytes(message) > MESSAGE_BYTES) {
        throw new DokitError<RoomsErrorCode>("INVALID_ARGUMENT", "a room message's body, ids and filters together are too large to deliver (keep except lists and ids short)");
      }
    }
    const digests = await Promise.all(messages.map(contentDigest));
    const now = Date.now();
    const seqs = this.ctx.storage.transactionSync(() => this.#log.append(messages, digests, now));
    const before = this.#members.count;
    const registered = shard ? this.#members.report(shard) : false;
    this.#countChanged(before);
    await this.#deliverSoon();
    return { seqs, count: this.#members.count, registered };
  }

  /**
   * Records a shard's presence changes, and answers with the room-wide presence news since what the
   * shard knows. Changes reach every other shard with the next count broadcast. The shard's count is
   * not taken from this call: its count reports alone carry it, so an older one never overtakes them.
   * @param update - the shard's changes since its last update, or its whole set (or one part of either); `null` to only ask
   * @param known - the sequencer instance and version of the last news the shard applied, `null` for none
   */
  async presence(shard: ShardReport, update: PresenceUpdate | null, known: PresenceKnown | null): Promise<PresenceAnswer> {
    let resync = false;
    if (update) {
      // A part with more to come changes nothing yet: the last part applies them all.
      if (this.#members.get(shard.name) && this.#presence.update(shard.name, update)) {
        if (!update.more) this.#announceSoon();
      } else resync = true;
    }
    return { news: this.#presence.answer(shard.name, known), resync };
  }

  /** @returns the log after `after`: the gap the window made, if any, then up to `limit` messages */
  async since(after: number, limit?: number): Promise<LogRange> {
    return this.#log.range(after, Math.min(limit ?? this.#limit, this.#limit));
  }

  /** Retries the deliveries that failed, or never ran (the object was reset meanwhile). */
  override async alarm(info?: AlarmInvocationInfo): Promise<void> {
    this.#armed = false;
    if (await this.#fanout.settle()) return;
    const failures = Math.max(1, ...this.#members.behind(this.#log.head).map((member) => member.failures), info?.retryCount ?? 0);
    await this.ctx.storage.setAlarm(Date.now() + Math.min(this.#retryMs * 2 ** (failures - 1), MAX_RETRY_MS));
    this.#armed = true;
  }

  /**
   * Arms the alarm before delivering, so a delivery that fails, or that a reset of this object cuts
   * short, is retried; a fan-out that catches every shard up leaves no alarm (an idle room costs nothing).
   */
  async #deliverSoon(): Promise<void> {
    if (!this.#members.any()) return;
    if (!this.#armed) {
      if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + this.#retryMs);
      this.#armed = true;
    }
    this.#fanout.kick();
  }

  /** The room-wide count changed: every shard hears of it within `countMs` (one delivery each for the changes meanwhile). */
  #countChanged(before: number): void {
    if (this.#members.count !== before) this.#announceSoon();
  }

  /** The count or presence changed: every shard hears of it within `countMs`, together. */
  #announceSoon(): void {
    if (this.#counting) return;
    this.#counting = setTimeout(() => {
      this.#counting = undefined;
      this.#fanout.announce();
    }, this.#countMs);
  }

  /** @returns the room's key (made once): deliveries carry it, and shards accept no delivery without it */
  #key(): string {
    return this.#made("key");
  }

  /**
   * @returns the epoch of this object's order, made once with its storage: public, unlike the key, and
   * later epochs sort after earlier ones (the time it was made, then a random part)
   */
  #epoch(): string {
    return this.#made("epoch", () => `${String(Date.now()).padStart(15, "0")}-${crypto.randomUUID().slice(0, 8)}`);
  }

  #made(name: "key" | "epoch", make: () => string = () => crypto.randomUUID()): string {
    let value = this.#log.meta(name);
    if (value === undefined) this.#log.setMeta(name, (value = make()));
    return value;
  }
}

/** @returns `value` when it is an integer from `min` to `max` @throws DokitError INVALID_ARGUMENT otherwise */
function inRange(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new DokitError<RoomsErrorCode>("INVALID_ARGUMENT", `RoomSequencer: ${name} must be an integer from ${min} to ${max} (got ${String(value)})`);
  }
  return value;
}
