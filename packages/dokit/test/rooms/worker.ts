import { publishToRoom, routeRoomRequest } from "../../src/rooms";

export { PartsSequencer, PresenceSequencer, RoomPresenceChat, RoomPresenceParts, RoomPresenceTree } from "./presence.objects";
export { FaultySequencer, RoomChat, RoomChatFaulty, RoomChatTree, TestRelay, TreeSequencer, RoomChatSlowBatch, RoomChatSlowMemory, RoomChatSmallLog, SmallLogSequencer, TestSequencer } from "./objects";

/**
 * `/room/<room>?shards=<n>`: a connection routed to one of the room's n shards (`?small=1`: the
 * small-log room classes, `?slow=1`: the shard that batches for a second and stores its batch, `?slow=memory`: the one that does not, `?faulty=1`: the shard whose sequencer fails a fifth of the calls, `?tree=1`: the shard whose sequencer fans out 2 wide through relays, `?presence=1`: the shard with room-wide presence, `?presence=tree`: the same through the 2-wide tree, `?presence=parts`: the one that sends its presence in parts of 4 KiB; `&capacity=<n>`: shards take n connections each). `POST /publish/<room>` with a JSON body: published from the Worker (`?small=1`, `?tree=1`: to those rooms' sequencers).
 */
export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const [, kind, room] = url.pathname.split("/");
    const small = url.searchParams.get("small") === "1";
    if (kind === "room" && room) {
      const shardCount = Number(url.searchParams.get("shards") ?? 1);
      const slow = url.searchParams.get("slow");
      const shards = url.searchParams.get("presence") === "1" ? "ROOM_PRESENCE_CHAT" : url.searchParams.get("presence") === "parts" ? "ROOM_PRESENCE_PARTS" : url.searchParams.get("presence") === "tree" ? "ROOM_PRESENCE_TREE" : url.searchParams.get("tree") === "1" ? "ROOM_CHAT_TREE" : url.searchParams.get("faulty") === "1" ? "ROOM_CHAT_FAULTY" : small ? "ROOM_CHAT_SMALL" : slow === "1" ? "ROOM_CHAT_SLOW" : slow === "memory" ? "ROOM_CHAT_SLOW_MEMORY" : "ROOM_CHAT";
      const capacity = url.searchParams.get("capacity");
      return routeRoomRequest(request, env, { shards, room, shardCount, ...(capacity !== null && { capacity: Number(capacity) }) });
    }
    if (kind === "publish" && room) {
      const sequencer = small ? "SMALL_SEQUENCER" : url.searchParams.get("tree") === "1" ? "TREE_SEQUENCER" : undefined;
      const seq = await publishToRoom(env, room, await request.json(), sequencer ? { sequencer } : {});
      return Response.json({ seq });
    }
    return new Response("no route", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
