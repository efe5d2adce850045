// A room whose sequencer lost its storage, as RoomMember sees it over loopback: told by a reset before
// the new order's messages, on the shard that learns of it first and on one it reconnects to.
import { describe, expect, inject, it } from "vitest";
import { RoomMember, type RoomMessage } from "../src/client";
import { closedAfterEach, fresh, sleep, untilRoom as until } from "./helpers";
import { publicIdOf as pub } from "../test/public-id";

const base = new URL(inject("workerUrl"));
const members = closedAfterEach();


describe("RoomMember when the room's order starts again", () => {
  it("hears onReset, then the new order from seq 1, on its own shard and after reconnecting to a stale one", async () => {
    const room = fresh("loop-epoch");
    const seen: Record<string, (RoomMessage<number> | string)[]> = { a: [], b: [] };
    const join = (id: string, shard: string) => {
      const member: RoomMember<number> = new RoomMember<number>({
        host: base.host,
        basePath: `rooms/${room}`,
        id,
        query: { shards: "2", shard },
        minReconnectionDelay: 50,
        maxReconnectionDelay: 200,
        onRoomMessage: (message) => seen[id]?.push(message),
        onReset: ({ epoch }) => seen[id]?.push(`reset ${epoch === member.epoch}`),
      });
      members.push(member);
      return member;
    };
    const a = join("a", "0");
    const b = join("b", "1");
    await until(() => a.shard === 0 && b.shard === 1, "both joined");
    expect(await Promise.all([a.publish(1), a.publish(2)])).toEqual([1, 2]);
    await until(() => seen.b?.length === 2, "1 and 2 on b");
    const old = a.epoch;
    expect(old).toMatch(/^\d{15}-/);

    expect(await (await fetch(new URL(`/rooms/${room}/wipe`, base), { method: "POST" })).text()).toBe("wiped");
    // Shard 0 finds the new order with a's next publish, and tells a before its messages.
    expect(await a.publish(3)).toBe(1);
    await until(() => seen.a?.length === 4, "a's reset and message");
    expect(seen.a?.map((entry) => (typeof entry === "string" ? entry : [entry.seq, entry.data]))).toEqual([[1, 1], [2, 2], "reset true", [1, 3]]);
    expect(a.seq).toBe(1);
    expect(String(a.epoch) > String(old)).toBe(true);

    // b reconnects to shard 1 with seq 2 of the old order: told, then given the new order from its start.
    await sleep(100);
    expect(seen.b?.length).toBe(2);
    b.client.reconnect();
    await until(() => seen.b?.length === 4, "b's reset and the new order's message");
    expect(seen.b?.map((entry) => (typeof entry === "string" ? entry : [entry.seq, entry.data]))).toEqual([[1, 1], [2, 2], "reset true", [1, 3]]);
    expect(b.epoch).toBe(a.epoch);
    expect(await b.publish(4)).toBe(2);
    await until(() => seen.a?.length === 5, "b's publish on a");
    expect(seen.a?.at(-1)).toMatchObject({ seq: 2, data: 4, from: pub("b") });
  });
});
