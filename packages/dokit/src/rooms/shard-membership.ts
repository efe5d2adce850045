import type { SequencerApi, ShardReport } from "./types";

/**
 * What a shard keeps in storage: how far it delivered, whether (and with which key) it is a member,
 * and the epoch of the order its `delivered` counts in.
 */
export type ShardRecord = { delivered: number; registered: boolean; key?: string; epoch?: string };

/** What the membership needs of its shard. */
export interface ShardMembershipDeps {
  storage: DurableObjectStorage;
  sequencer(): SequencerApi;
  /** The shard's report (name, binding, open connections). */
  report(): ShardReport;
  /** How soon a change in the connection count is reported, in ms. */
  countMs: number;
  /** Told each time a room-wide count is heard from the sequencer. */
  counted?(): void;
  /**
   * The room's order started again (its sequencer lost its storage): the shard tells its clients
   * before the new order's messages reach them.
   */
  restarted(epoch: string): void;
}

const RECORD = "__dokit_room";

/**
 * A shard's standing in its room: its stored record (the last seq it sent its clients, its
 * registration and the room's key), joins and leaves (one at a time: deliveries wait for them), and
 * its connection count, reported to the sequencer at most once per `countMs`.
 */
export class ShardMembership {
  readonly #deps: ShardMembershipDeps;
  #record: ShardRecord = { delivered: 0, registered: false };
  /** Joins and leaves, one at a time. */
  #serial: Promise<unknown> = Promise.resolve();
  #roomCount = 0;
  /** The connection count the sequencer was last told (in a join, a report, a publish or a delivery's answer). */
  #told = -1;
  /** This shard's part in `#roomCount`: what the sequencer had been told when it made that count. */
  #included = -1;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(deps: ShardMembershipDeps) {
    this.#deps = deps;
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
    this.#deps.counted?.();
  }

  /** The shard told the sequencer its connection count (in its answer to a delivery). */
  told(connections: number): void {
    this.#told = connections;
  }

  /**
   * @returns the room-wide count with this shard's own part as it is now (`connections`) rather than as
   * the sequencer last heard it: a connection's welcome counts it, and the connections that came before it
   */
  countWith(connections: number): number {
    return this.#included < 0 ? Math.max(this.#roomCount, connections) : Math.max(connections, this.#roomCount - this.#included + connections);
  }

  get record(): ShardRecord {
    return this.#record;
  }

  async load(): Promise<void> {
    this.#record = (await this.#deps.storage.get<ShardRecord>(RECORD)) ?? this.#record;
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
      const report = this.#deps.report();
      const known = this.#record.epoch;
      const joined = await this.#deps.sequencer().join(report, keep ? this.#record.delivered : null, known);
      this.#record = { delivered: joined.at, registered: true, key: joined.key, epoch: joined.epoch };
      this.heard(joined.count, report.connections);
      if (known !== undefined && known !== joined.epoch) this.#deps.restarted(joined.epoch);
      await this.#save();
    });
  }

  /** Unregisters when no connection is left (so the idle shard receives nothing and may hibernate). */
  leave(): Promise<void> {
    return this.#serially(async () => {
      const report = this.#deps.report();
      if (!this.#record.registered || report.connections > 0) return;
      await this.#deps.sequencer().leave(report.name);
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
      const report = this.#deps.report();
      if (!this.#record.registered || report.connections === this.#told || report.connections === 0) return;
      this.#told = report.connections;
      this.#deps
        .sequencer()
        .report(report)
        .then(({ count, registered }) => {
          this.heard(count);
          if (!registered && this.#record.registered) return this.join(true);
        })
        .catch((error: unknown) => console.warn("dokit: a room shard failed to report its connections", error));
    }, this.#deps.countMs);
  }

  #serially(work: () => Promise<void>): Promise<void> {
    const next = this.#serial.then(work);
    this.#serial = next.catch(() => {});
    return next;
  }

  #save(): Promise<void> {
    return this.#deps.storage.put(RECORD, this.#record);
  }
}
