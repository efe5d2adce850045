import { routeRoomRequest } from "../src/rooms";

import type { RoomsLoopShard } from "./rooms.objects";

/**
 * `/rooms/<room>?shards=<n>`: a connection routed to one of the room's shards. `POST /rooms/<room>/drain?shard=<i>`:
 * drains that shard and answers how many connections it closed. `undefined` for any other request.
 */
export async function roomsRoute(request: Request, env: object): Promise<Response | undefined> {
  const url = new URL(request.url);
  const [, kind, room, action] = url.pathname.split("/");
  if (kind !== "rooms" || !room) return undefined;
  if (action === "drain" && request.method === "POST") {
    // SAFETY: the loopback worker binds RoomsLoopShard (wrangler.jsonc).
    const shards = (env as { RoomsLoopShard: DurableObjectNamespace<RoomsLoopShard> }).RoomsLoopShard;
    return Response.json(await shards.getByName(`${room}#${url.searchParams.get("shard")}`).drain());
  }
  return routeRoomRequest(request, env, { shards: "RoomsLoopShard", room, shardCount: Number(url.searchParams.get("shards") ?? 2) });
}
