import type { WebSockets } from "../websockets/websockets";
import { namespaceOf, parseShardName, stubOf } from "./names";
import { CountNotice } from "./shard-count";
import type { OutgoingMessage, Published, SequencerApi, ShardReport } from "./types";

/**
 * What a shard keeps in storage: how far it delivered, whether (and with which key) it is a member,
 * and the epoch of the order its `delivered` counts in.
 */
export type ShardRecord = { delivered: number; registered: boolean; key?: string; epoch?: string };

/** Where a shard stands: its object, its connections and its room's sequencer. */
export interface ShardMembershipOptions {
  storage: DurableObjectStorage;
  /** The shard's connections: their count is reported, and count frames go to them. */
  webSockets: WebSockets;
  /** The shard's object name (`<room>#<index>`). */
  name: string;
  /** The name of the binding the shard's class is bound to (the sequencer delivers through it). */
  binding: string;
  /** The object's `env`, and the name of the sequencer's binding in it. */
  env: object;
  sequencer: string;
  /** How soon a change in the connection count is reported, and told to clients, in ms. */
  countMs: number;
  /**
   * The room's order started again (its sequencer lost its storage): the shard tells its clients
   * before the new order's messages reach them.
   */
  restarted(epoch: string): void;
}

const RECORD = "__dokit_room";

/**
 * A shard's standing in its room, and its one link to the room's sequencer: its stored record (the
 * last seq it sent its clients, its registration and the room's key), joins and leaves (one at a
 * time: deliveries wait for them), its publishes, and the room-wide connection count: its own
 * reported to the sequencer at most once per `countMs`, the room's told to its clients.
 */
export class ShardMembership {
  readonly #options: ShardMembershipOptions;
  readonly #countNotice: CountNotice;
  #record: ShardRecord = { delivered: 0, registered: false };
  /** Joins and leaves, one at a time. */
  #serial: Promise<unknown> = Promise.resolve();
  #roomCount = 0;
  /** The connection count the sequencer was last told (in a join, a report, a publish or a delivery's answer). */
  #told = -1;
  /** This shard's part in `#roomCount`: what the sequencer had been told when it made that count. */
  #included = -1;
  #timer: ReturnType<typeof setTimeout> | undefined;
  constructor(options: ShardMembershipOptions) {
    this.#options = options;
    this.#countNotice = new CountNotice(options.webSockets, options.countMs, () => this.count(), options.storage);
  }

  /** The room this shard belongs to (its object name without `#<index>`). */
  get room(): string {
    return parseShardName(this.#options.name).room;
  }

  /** This shard's index in the room. */
  get index(): number {
    return parseShardName(this.#options.name).index;
  }

  /** @returns a stub of the room's sequencer */
  sequencer(): SequencerApi {
    return stubOf<SequencerApi>(namespaceOf(this.#options.env, this.#options.sequencer, "RoomShard sequencer"), this.room);
  }

  /** @returns what the shard tells the sequencer of itself: its name, binding and open connections */
  report(): ShardReport {
    return { name: this.#options.name, binding: this.#options.binding, connections: this.#options.webSockets.count() };
  }

  /**
   * @returns the room-wide count with this shard's own connections as they are now rather than as
   * the sequencer last heard them: a connection's welcome counts it, and the connections that came before it
   */
  count(): number {
    const connections = this.#options.webSockets.count();
    return this.#included < 0 ? Math.max(this.#roomCount, connections) : Math.max(connections, this.#roomCount - this.#included + connections);
  }

  /** A connection was welcomed with `count`: its clients are told the count again at its next change. */
  welcomed(count: number): void {
    this.#countNotice.welcomed(count);
  }

  /**
   * Sends a batch of publishes to the sequencer (with the shard's count when it is a member).
   * @returns the sequencer's answer: each message's seq
   */
  async publish(messages: OutgoingMessage[]): Promise<Published> {
    const registered = this.#record.registered;
    const report = registered ? this.report() : null;
    const published = await this.sequencer().publish(report, messages);
    this.heard(published.count, report?.connections);
    // The sequencer no longer lists this shard (it was unreachable for a delivery): join again, keeping its place.
    if (registered && !published.registered && this.#record.registered) void this.join(true).catch(() => {});
    return published;
  }

  /**
   * A room-wide count heard from the sequencer. `told`: the connection count the call that answered
   * it told the sequencer (a join, a report, a publish); absent for a delivery, made before the
   * shard's answer, with what it was told last.
   */
  heard(count: number, told?: number): void {
    if (told !== undefined) this.#told = told;
    this.#included = this.#told;
    this.#roomCount = count;
    this.#countNotice.heard(this.count());
  }

  /** The shard told the sequencer its connection count (in its answer to a delivery). */
  told(connections: number): void {
    this.#told = connections;
  }

  get record(): ShardRecord {
    return this.#record;
  }

  async load(): Promise<void> {
    this.#record = (await this.#options.storage.get<ShardRecord>(RECORD)) ?? this.#record;
  }

  /** The shard sent its clients everything up to `seq` (stored, not awaited: the output gate holds the sends until it is durable). */
  delivered(seq: number): void {
    this.#record = { ...this.#record, delivered: seq };
    void this.#save();
  }

  /** @returns once the join or leave under way (if any) is done */
  settled(): Promise<unknown> {
    return this.#serial;
  }

  /**
   * Registers with the sequencer (`keep`: at the seq delivered so far, for clients that are here; else
   * at the room's head, and only when not registered once the joins and leaves before it are done).
   */
  join(keep: boolean): Promise<void> {
    return this.#serially(async () => {
      if (this.#record.registered && !keep) return;
      const report = this.report();
      const known = this.#record.epoch;
      const joined = await this.sequencer().join(report, keep ? this.#record.delivered : null, known);
      this.#record = { delivered: joined.at, registered: true, key: joined.key, epoch: joined.epoch };
      this.heard(joined.count, report.connections);
      if (known !== undefined && known !== joined.epoch) this.#options.restarted(joined.epoch);
      await this.#save();
    });
  }

  /** Unregisters when no connection is left (so the idle shard receives nothing and may hibernate). */
  leave(): Promise<void> {
    return this.#serially(async () => {
      const report = this.report();
      if (!this.#record.registered || report.connections > 0) return;
      await this.sequencer().leave(report.name);
      this.#record = { ...this.#record, registered: false };
      await this.#save();
    });
  }

  /**
   * The connection count changed: reported after `countMs` (one report for the changes meanwhile). A
   * sequencer that no longer lists the shard (it lost its storage, or gave up on the shard) makes it join again.
   */
  countChanged(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      const report = this.report();
      if (!this.#record.registered || report.connections === this.#told || report.connections === 0) return;
      this.#told = report.connections;
      this
        .sequencer()
        .report(report)
        .then(({ count, registered }) => {
          this.heard(count);
          if (!registered && this.#record.registered) return this.join(true);
        })
        .catch((error: unknown) => console.warn("dokit: a room shard failed to report its connections", error));
    }, this.#options.countMs);
  }

  #serially(work: () => Promise<void>): Promise<void> {
    const next = this.#serial.then(work);
    this.#serial = next.catch(() => {});
    return next;
  }

  #save(): Promise<void> {
    return this.#options.storage.put(RECORD, this.#record);
  }
}
