// The rooms bench's many-process room (bench/rooms-scale.ts `--scale-hosts`, started by
// lib/room-hosts.ts): one module run as K "host" Workers, each its own `wrangler dev` session and so
// its own workerd process, and one "coordinator" Worker. Each host holds some of the room's shards
// (`ScaleShard`, bound as `SHARD_<i>` in host i, its var HOST_BINDING); the coordinator holds the
// room's `ScaleSequencer` and binds every host's shard class through wrangler's dev registry
// (`script_name`), so the sequencer delivers across processes as the platform does across machines.
//   /room/<room>?shard=<j>&shards=<n>&_pk=<id>  (a host) a WebSocket to its own shard `<room>#<j>`
//   /publish/<room>  (POST, JSON data as body)   (the coordinator) publishToRoom
//   /ping                                        "ok"
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "dokit/lifecycle";
import { publishToRoom, RoomSequencer, RoomShard, routeRoomRequest } from "dokit/rooms";
import { WebSockets } from "dokit/websockets";

interface Env {
  /** This host's binding of its own shard class (`SHARD_<i>`); the coordinator has none. */
  HOST_BINDING?: string;
}

/** A shard of the room, on one host: 10 ms batch window, reporting its host's binding to the sequencer. */
export class ScaleShard extends DurableObject<Env> {
  readonly webSockets = new WebSockets();
  readonly room = new RoomShard({ webSockets: this.webSockets, env: this.env, shards: this.env.HOST_BINDING ?? "", batchMs: 10 });
  readonly lifecycle = Lifecycle.install(this).use(this.room);
}

/** The room's sequencer, on the coordinator (default options: flat delivery up to 16 shards). */
export class ScaleSequencer extends RoomSequencer {}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const [, action, room = ""] = url.pathname.split("/");
    if (action === "ping") return new Response("ok");
    if (action === "publish" && request.method === "POST") return Response.json({ seq: await publishToRoom(env, room, JSON.parse(await request.text())) });
    if (action === "room" && env.HOST_BINDING && room) {
      return routeRoomRequest(request, env, { shards: env.HOST_BINDING, room, shardCount: Number(url.searchParams.get("shards") ?? 1) });
    }
    return new Response("no route", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
