// The official `agents` client on a shard of a room: it connects through the room's router (its
// `basePath`) or by the shard's object name as to any agent, reads the room's frames as ordinary
// messages, and publishes with the room's publish frame.
import { AgentClient as OfficialClient } from "agents/client";
import { describe, expect, inject, it } from "vitest";
import { RoomMember, type RoomMessage } from "../src/client";
import { closedAfterEach, fresh, untilRoom as until } from "./helpers";
import { publicIdOf as pub } from "../test/public-id";

const base = new URL(inject("workerUrl"));
const open = closedAfterEach();


describe("the official agents client on a room's shard", () => {
  it("joins through the room's router, receives the room's messages from another shard, and publishes to the whole room", async () => {
    const room = fresh("loop-official");
    const received: RoomMessage<string>[] = [];
    const member = new RoomMember<string>({ host: base.host, basePath: `rooms/${room}`, id: "m", query: { shards: "2", shard: "0" }, onRoomMessage: (message) => received.push(message) });
    open.push(member);
    // Through the router, as a RoomMember connects; `shard` is the router's hint (else a hash of the id).
    const official = new OfficialClient({ agent: "RoomsLoopShard", basePath: `rooms/${room}`, query: { shards: "2", shard: "1" }, host: base.host, id: "o" } as never);
    open.push(official);
    const frames = framesOf(official);
    await until(() => member.shard === 0 && frames.some((frame) => frame.type === "dokit_room_welcome"), "both joined");
    expect(frames.find((frame) => frame.type === "dokit_room_welcome")).toMatchObject({ room, shard: 1, seq: 0 });

    expect(await member.publish("from the member")).toBe(1);
    await until(() => frames.some((frame) => frame.type === "dokit_room"), "the member's message on the official client");
    expect(frames.filter((frame) => frame.type === "dokit_room")).toEqual([{ type: "dokit_room", seq: 1, from: pub("m"), data: "from the member" }]);

    official.send(JSON.stringify({ type: "dokit_room_publish", id: "o-1", data: "from the official client" }));
    await until(() => received.length === 2 && frames.some((frame) => frame.type === "dokit_room_ack"), "the official client's message on the member, and its ack");
    expect(received.map((message) => [message.seq, message.from, message.data])).toEqual([
      [1, pub("m"), "from the member"],
      [2, pub("o"), "from the official client"],
    ]);
    expect(frames.find((frame) => frame.type === "dokit_room_ack")).toEqual({ type: "dokit_room_ack", id: "o-1", seq: 2 });

    // By the shard's object name, as any agent: `#` must be encoded (the client puts the name in the URL's path as given).
    const direct = new OfficialClient({ agent: "RoomsLoopShard", name: encodeURIComponent(`${room}#0`), host: base.host, id: "d" } as never);
    open.push(direct);
    const directFrames = framesOf(direct);
    await until(() => directFrames.some((frame) => frame.type === "dokit_room_welcome"), "the direct client's welcome");
    expect(directFrames.find((frame) => frame.type === "dokit_room_welcome")).toMatchObject({ room, shard: 0, seq: 2, count: 3 });
    expect(await member.publish("to all three")).toBe(3);
    await until(() => directFrames.some((frame) => frame.type === "dokit_room") && frames.filter((frame) => frame.type === "dokit_room").length === 3, "seq 3 on both official clients");
    expect(directFrames.filter((frame) => frame.type === "dokit_room")).toEqual([{ type: "dokit_room", seq: 3, from: pub("m"), data: "to all three" }]);
  });
});

function framesOf(client: OfficialClient): Record<string, unknown>[] {
  const frames: Record<string, unknown>[] = [];
  client.addEventListener("message", (event) => frames.push(JSON.parse(String((event as MessageEvent).data)) as Record<string, unknown>));
  return frames;
}
