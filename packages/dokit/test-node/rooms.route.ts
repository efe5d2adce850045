import { routeRoomRequest } from "../src/rooms";

/** `/rooms/<room>?shards=<n>`: a connection routed to one of the room's shards; `undefined` for any other request. */
export async function roomsRoute(request: Request, env: object): Promise<Response | undefined> {
  const url = new URL(request.url);
  const [, kind, room] = url.pathname.split("/");
  if (kind !== "rooms" || !room) return undefined;
  return routeRoomRequest(request, env, { shards: "RoomsLoopShard", room, shardCount: Number(url.searchParams.get("shards") ?? 2) });
}
