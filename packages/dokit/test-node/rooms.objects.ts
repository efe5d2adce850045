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

/** The rooms' sequencer, as it ships, with test doors to reset it as a crash would and to lose its storage. */
export class RoomsLoopSequencer extends RoomSequencer {
  reset(): void {
    this.ctx.abort("test: reset");
  }

  /** Loses every stored row, as a lost database would (then reset the instance: its tables are gone). */
  async wipe(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
