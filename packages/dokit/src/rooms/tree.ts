import type { Fanout, FanoutDeps } from "./fanout";
import { spread } from "./relay";
import type { Delivery } from "./types";

/** What the tree adds to the flat fan-out's needs. */
export interface TreeDeps extends FanoutDeps {
  /** The most calls one object makes per delivery. */
  width: number;
  /** The name of the `RoomRelay` binding. */
  relays: string;
}

/**
 * Delivers through a tree of relays: one delivery at a time for the whole room, carrying the
 * messages after the furthest cursor of the shards that are behind (a shard further back pulls the
 * rest from the log itself, as it does after any missed delivery), to every shard that is behind,
 * through at most `width` calls per object. Each shard's cursor moves by what it confirmed; a shard
 * whose delivery failed (or whose relay failed) is left for the sequencer's alarm to retry, and
 * one that answered 410 is unregistered.
 */
export class TreeFanout implements Fanout {
  readonly #deps: TreeDeps;
  #running: Promise<void> | undefined;
  #again = false;
  #announce = false;

  constructor(deps: TreeDeps) {
    this.#deps = deps;
  }

  kick(): void {
    this.#run();
  }

  announce(): void {
    this.#announce = true;
    this.#run();
  }

  async settle(): Promise<boolean> {
    this.kick();
    while (this.#running) await this.#running;
    return this.#deps.members.behind(this.#deps.log.head).length === 0;
  }

  #run(): void {
    if (this.#running) return void (this.#again = true);
    this.#running = this.#loop().finally(() => {
      this.#running = undefined;
      if (this.#again) this.#run();
    });
  }

  async #loop(): Promise<void> {
    const { members, log, limit, env } = this.#deps;
    for (;;) {
      this.#again = false;
      const announce = this.#announce;
      this.#announce = false;
      const head = log.head;
      const behind = members.behind(head);
      const targets = announce ? members.all() : behind;
      if (targets.length === 0) return;
      const from = behind.length ? Math.max(...behind.map((member) => member.cursor)) : head;
      const delivery: Delivery = { messages: log.after(from, limit), head, count: members.count };
      const presence = this.#deps.presence(targets.map((member) => member.name));
      if (presence) delivery.presence = presence;
      const outcomes = await spread(env, JSON.stringify(delivery), targets, { key: this.#deps.key(), width: this.#deps.width, relays: this.#deps.relays, path: "" }, this.#deps.hook);
      let progress = false;
      for (const [i, member] of targets.entries()) {
        const outcome = outcomes[i];
        if (!outcome) continue;
        if ("left" in outcome) members.leave(member.name);
        else if ("failed" in outcome) {
          const failures = members.failed(member.name);
          console.warn(`dokit: delivery to room shard ${member.name} failed (${failures} in a row); the sequencer's alarm retries it: ${outcome.failed}`);
        } else {
          members.advance(member.name, outcome.delivered, outcome.connections);
          if (outcome.delivered > member.cursor) progress = true;
        }
      }
      // No shard moved on: the alarm retries (no loop against a shard that cannot be reached).
      if (!progress && !this.#again) return;
    }
  }
}

/**
 * The sequencer's fan-out: flat (one call per shard) while the room has at most `width` shards,
 * the relay tree beyond, when the relays' binding exists (else flat, with a warning once).
 */
export class WidthFanout implements Fanout {
  readonly #flat: Fanout;
  readonly #tree: Fanout | undefined;
  readonly #deps: TreeDeps;
  #warned = false;

  constructor(flat: Fanout, tree: Fanout | undefined, deps: TreeDeps) {
    this.#flat = flat;
    this.#tree = tree;
    this.#deps = deps;
  }

  kick(): void {
    this.#pick().kick();
  }

  announce(): void {
    this.#pick().announce();
  }

  async settle(): Promise<boolean> {
    return this.#pick().settle();
  }

  #pick(): Fanout {
    if (this.#deps.members.size() <= this.#deps.width) return this.#flat;
    if (this.#tree) return this.#tree;
    if (!this.#warned) {
      this.#warned = true;
      console.warn(`dokit: a room has more than ${this.#deps.width} shards but env.${this.#deps.relays} is no RoomRelay binding: the sequencer delivers to every shard itself`);
    }
    return this.#flat;
  }
}
