import { type DeliveryHook, deliverTo } from "./deliver";
import type { RoomLog } from "./sequencer-log";
import type { Member, SequencerMembers } from "./sequencer-members";
import type { Delivered, Delivery, PresenceNews } from "./types";

/**
 * How the sequencer's new messages reach the room's shards. The flat fan-out below calls every
 * shard itself (S calls per batch); a relay tree can take its place behind this interface.
 */
export interface Fanout {
  /** Starts delivering to every shard that is behind (returns at once). */
  kick(): void;
  /** Delivers to every shard that is behind and waits. @returns whether every shard is caught up */
  settle(): Promise<boolean>;
  /** Sends the room-wide count to every shard (a delivery with no messages), at once. */
  announce(): void;
}

/** What the flat fan-out reads and updates. */
export interface FanoutDeps {
  env: object;
  log: RoomLog;
  members: SequencerMembers;
  /** The room's key, sent with every delivery. */
  key(): string;
  /** The most messages one delivery carries. */
  limit: number;
  /** Called around each delivery (chaos tests: a hook that throws fails it). */
  hook?: DeliveryHook | undefined;
  /** @returns the room-wide presence news a delivery to these shards carries, if the room has presence */
  presence(names: readonly string[]): PresenceNews | undefined;
}

/**
 * Delivers to each registered shard the messages after its cursor, at least once: one delivery in
 * flight per shard (a shard receives its messages in order), the cursor moved only by what the shard
 * confirms. A delivery that fails is left for the sequencer's alarm to retry; a shard that answers
 * 410 (it has no clients left, or does not know the room's key) is unregistered.
 */
export class FlatFanout implements Fanout {
  readonly #deps: FanoutDeps;
  /** The delivery loop running per shard. */
  readonly #running = new Map<string, Promise<void>>();
  /** Shards that got new messages while their loop was awaiting a delivery. */
  readonly #again = new Set<string>();
  /** Shards owed a delivery for the count (and presence), even with no new message. */
  readonly #announcing = new Set<string>();

  constructor(deps: FanoutDeps) {
    this.#deps = deps;
  }

  kick(): void {
    for (const member of this.#deps.members.behind(this.#deps.log.head)) this.#start(member.name);
  }

  async settle(): Promise<boolean> {
    this.kick();
    while (this.#running.size) await Promise.all(this.#running.values());
    return this.#deps.members.behind(this.#deps.log.head).length === 0;
  }

  announce(): void {
    for (const member of this.#deps.members.all()) {
      // A delivery under way may have been made before the change: the shard gets one more after it.
      this.#announcing.add(member.name);
      this.#start(member.name);
    }
  }

  #start(name: string): void {
    if (this.#running.has(name)) return void this.#again.add(name);
    const loop = this.#loop(name).finally(() => {
      this.#running.delete(name);
      if (this.#again.delete(name)) this.#start(name);
    });
    this.#running.set(name, loop);
  }

  /** Delivers to one shard until it is caught up (and once more for each announce: the count and presence). */
  async #loop(name: string): Promise<void> {
    const { members, log } = this.#deps;
    for (;;) {
      this.#again.delete(name);
      const announce = this.#announcing.delete(name);
      const member = members.get(name);
      if (!member || (member.cursor >= log.head && !announce)) return;
      try {
        const delivered = await this.#deliver(member);
        if (delivered === undefined) return members.leave(name);
        members.advance(name, delivered.delivered, delivered.connections);
        // A shard that confirms no progress is retried by the alarm, not in a loop.
        if (delivered.delivered <= member.cursor && !announce && !this.#announcing.has(name)) return;
      } catch (error) {
        const failures = members.failed(name);
        console.warn(`dokit: delivery to room shard ${name} failed (${failures} in a row); the sequencer's alarm retries it`, error);
        return;
      }
    }
  }

  /** @returns what the shard confirmed, or `undefined` when it answered 410 (no longer a member) */
  #deliver(member: Member): Promise<Delivered | undefined> {
    const { env, log, members, limit, hook } = this.#deps;
    const delivery: Delivery = { messages: log.after(member.cursor, limit), head: log.head, count: members.count };
    const presence = this.#deps.presence([member.name]);
    if (presence) delivery.presence = presence;
    return deliverTo(env, member, this.#deps.key(), JSON.stringify(delivery), hook);
  }
}
