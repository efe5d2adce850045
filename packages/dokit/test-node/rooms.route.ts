import { publishToRoom, routeRoomRequest } from "../src/rooms";

import type { RoomsLoopSequencer, RoomsLoopShard } from "./rooms.objects";

/**
 * `/rooms/<room>?shards=<n>[&capacity=<c>]`: a connection routed to one of the room's shards (each taking c connections). `POST /rooms/<room>/drain?shard=<i>`:
 * drains that shard and answers how many connections it closed. `POST /rooms/<room>/refuse?on=1|0`: the
 * room's sequencer fails every publish, or none. `POST /rooms/<room>/wipe`: the room's
 * sequencer loses its storage (reset before, so no delivery of it is under way, and after). `POST /rooms/<room>/publish` with a JSON
 * body: published from the Worker (answers its seq). `undefined` for any other request.
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
  if (action === "refuse" && request.method === "POST") {
    // SAFETY: the loopback worker binds RoomsLoopSequencer (wrangler.jsonc).
    const namespace = (env as { RoomsLoopSequencer: DurableObjectNamespace<RoomsLoopSequencer> }).RoomsLoopSequencer;
    await namespace.getByName(room).refusePublishes(url.searchParams.get("on") === "1");
    return new Response("set");
  }
  if (action === "wipe" && request.method === "POST") {
    // SAFETY: the loopback worker binds RoomsLoopSequencer (wrangler.jsonc).
    const namespace = (env as { RoomsLoopSequencer: DurableObjectNamespace<RoomsLoopSequencer> }).RoomsLoopSequencer;
    // A stub is broken once its object resets: one per call.
    await namespace.getByName(room).reset().catch(() => {});
    await namespace.getByName(room).wipe();
    await namespace.getByName(room).reset().catch(() => {});
    return new Response("wiped");
  }
  if (action === "publish" && request.method === "POST") {
    return Response.json(await publishToRoom(env, room, await request.json(), { sequencer: "RoomsLoopSequencer" }));
  }
  const capacity = url.searchParams.get("capacity");
  return routeRoomRequest(request, env, {
    shards: "RoomsLoopShard",
    room,
    shardCount: Number(url.searchParams.get("shards") ?? 2),
    ...(capacity !== null && { capacity: Number(capacity) }),
  });
}
