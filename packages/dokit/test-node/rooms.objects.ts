import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../src/lifecycle";
import { RoomSequencer, RoomShard } from "../src/rooms";
import { WebSockets } from "../src/websockets";

/** A shard of a room, reached through `/rooms/<room>` (rooms.route.ts) and, like any object, through routeAgentRequest. */
export class RoomsLoopShard extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets();
  readonly room = new RoomShard({ webSockets: this.webSockets, env: this.env, shards: "RoomsLoopShard", sequencer: "RoomsLoopSequencer" });
  readonly lifecycle = Lifecycle.install(this).use(this.room);

  /** Takes this shard out of its room (DO RPC, from rooms.route.ts). */
  drain(): Promise<number> {
    return this.room.drain();
  }
}

/** The rooms' sequencer, as it ships, with test doors to reset it as a crash would, to lose its storage and to refuse publishes. */
export class RoomsLoopSequencer extends RoomSequencer {
  #refusing = false;

  override async publish(...args: Parameters<RoomSequencer["publish"]>) {
    if (this.#refusing) throw new Error("test: publishes refused");
    return super.publish(...args);
  }

  /** Fails every publish from now on (`true`), as an unreachable sequencer would, or none (`false`). */
  refusePublishes(on: boolean): void {
    this.#refusing = on;
  }

  reset(): void {
    this.ctx.abort("test: reset");
  }

  /** Loses every stored row, as a lost database would (then reset the instance: its tables are gone). */
  async wipe(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
