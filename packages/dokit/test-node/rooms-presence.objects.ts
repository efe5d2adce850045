import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../src/lifecycle";
import { Presence } from "../src/presence";
import { RoomSequencer, RoomShard, routeRoomRequest } from "../src/rooms";
import { WebSockets } from "../src/websockets";

/** A shard of a room with room-wide presence, reached through `/rooms-presence/<room>` (roomsPresenceRoute). */
export class RoomsPresenceShard extends DurableObject<Env> {
  readonly presence = new Presence<{ name: string }>();
  readonly webSockets: WebSockets = new WebSockets({ presence: this.presence });
  readonly room = new RoomShard({ webSockets: this.webSockets, env: this.env, shards: "RoomsPresenceShard", sequencer: "RoomsPresenceSequencer", countMs: 100 });
  readonly lifecycle = Lifecycle.install(this).use(this.room);
}

/** Their sequencer, with a count broadcast of 100 ms. */
export class RoomsPresenceSequencer extends RoomSequencer {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, { countMs: 100 });
  }
}

/** `/rooms-presence/<room>?shards=<n>`: a connection routed to one of the room's shards; `undefined` for any other request. */
export async function roomsPresenceRoute(request: Request, env: object): Promise<Response | undefined> {
  const url = new URL(request.url);
  const [, kind, room] = url.pathname.split("/");
  if (kind !== "rooms-presence" || !room) return undefined;
  return routeRoomRequest(request, env, { shards: "RoomsPresenceShard", room, shardCount: Number(url.searchParams.get("shards") ?? 2) });
}
