import { DurableObject } from "cloudflare:workers";
import { Inspector } from "dokit/inspector";
import { Lifecycle } from "dokit/lifecycle";
import { Observability } from "dokit/observability";
import { RoomSequencer, RoomShard } from "dokit/rooms";
import { WebSockets } from "dokit/websockets";
import { MAX_MESSAGE_BYTES } from "./api";

/**
 * One shard of a live room: an ordinary Durable Object of this app, named `<room>#<index>` by the
 * router, holding its share of the room's viewers. `RoomShard` makes it a member of the room: what
 * any viewer on any shard publishes reaches every viewer here, once, in the room's one order.
 */
export class LiveShard extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets();
  readonly room = new RoomShard({
    webSockets: this.webSockets,
    env: this.env,
    shards: "LiveShard",
    sequencer: "LiveSequencer",
    maxMessageBytes: MAX_MESSAGE_BYTES,
    // A small demo room: counts reach the other shards within a quarter of a second (default 1 s).
    countMs: 250,
  });
  readonly lifecycle = Lifecycle.install(this).use(this.room)
    // The live inspector at /agents/live-shard/<room>%23<index>/__dokit (localhost only: docs/inspector.md):
    // this shard's viewers and their messages as they happen.
    .use(new Inspector({ enabled: true, observability: new Observability(), webSockets: this.webSockets }));

  /**
   * DO RPC: takes this shard out of the room for a moment. Its viewers are closed with 3009, reconnect
   * through the router, and resume after the last seq they received; the instance resets.
   * @returns how many viewers were closed
   */
  async drain(): Promise<number> {
    await this.lifecycle.start();
    return this.room.drain();
  }
}

/**
 * The room's sequencer (one per room, named after it): it numbers every message, keeps the newest
 * 500 for viewers who join late or come back, and hands each message to every shard with viewers.
 */
export class LiveSequencer extends RoomSequencer {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, { logMessages: 500, countMs: 250, relays: "LiveRelay" });
  }
}
