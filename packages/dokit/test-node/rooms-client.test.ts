// The dokit client's RoomMember over loopback: real sockets through the Worker's room router; a
// drained shard's members reconnect by themselves, resume with their last seq, resend what was not
// acknowledged, and receive every message once, in order.
import { describe, expect, inject, it } from "vitest";
import { RoomMember, type RoomMessage } from "../src/client";
import { closedAfterEach, fresh, sleep, untilRoom as until } from "./helpers";
import { publicIdOf as pub } from "../test/public-id";

const base = new URL(inject("workerUrl"));
const members = closedAfterEach();


describe("RoomMember (dokit/client) over loopback", () => {
  it("publishes with acks, follows a drain to the shard that stays, resumes and resends, missing nothing", async () => {
    const room = fresh("loop-member");
    let shards = 2;
    const received: Record<string, RoomMessage<number>[]> = { a: [], b: [] };
    const join = (id: string, shard: string) => {
      const member = new RoomMember<number>({
        host: base.host,
        basePath: `rooms/${room}`,
        id,
        query: () => ({ shards: String(shards), shard }),
        minReconnectionDelay: 50,
        maxReconnectionDelay: 200,
        onRoomMessage: (message) => received[id]?.push(message),
      });
      members.push(member);
      return member;
    };
    const a = join("a", "0");
    const b = join("b", "1");
    await until(() => a.shard === 0 && b.shard === 1, "both joined");
    const seqs = await Promise.all([1, 2, 3].map((n) => a.publish(n)));
    expect(seqs).toEqual([1, 2, 3]);
    await until(() => received.b?.length === 3, "1..3 on b");

    // The room shrinks to one shard; shard 1 is drained. b reconnects by itself (3009 is not final).
    shards = 1;
    const closed = new Promise<number>((resolve) => b.client.addEventListener("close", (event) => resolve(event.code), { once: true }));
    expect(await (await fetch(new URL(`/rooms/${room}/drain?shard=1`, base), { method: "POST" })).json()).toBe(1);
    expect(await closed).toBe(3009);
    // Published while b is away: a's messages, and b's own (sent when it is back).
    const more = [a.publish(4), b.publish(100), a.publish(5)];
    expect(new Set(await Promise.all(more)).size).toBe(3);
    await until(() => b.shard === 0 && received.b?.length === 6 && received.a?.length === 6, "b back on shard 0 with 4, 5 and its own");
    await sleep(200);
    for (const id of ["a", "b"]) {
      const list = received[id] ?? [];
      expect(list.map((message) => message.seq), id).toEqual([1, 2, 3, 4, 5, 6]);
      expect(list.filter((message) => message.from === pub("b")).map((message) => message.data)).toEqual([100]);
      expect(list.filter((message) => message.from === pub("a")).map((message) => message.data)).toEqual([1, 2, 3, 4, 5]);
    }
  });

  it("sends again, in order, the publishes the room failed to take, after the room closed it with 3010", async () => {
    const room = fresh("loop-refused");
    const errors: string[] = [];
    const received: RoomMessage<number>[] = [];
    const options = { host: base.host, basePath: `rooms/${room}`, minReconnectionDelay: 50, maxReconnectionDelay: 200 };
    const a = new RoomMember<number>({ ...options, id: "a", query: { shards: "2", shard: "0" }, onPublishError: ({ code, id }) => errors.push(`${code} ${id}`) });
    const b = new RoomMember<number>({ ...options, id: "b", query: { shards: "2", shard: "1" }, onRoomMessage: (message) => received.push(message) });
    members.push(a, b);
    await until(() => a.shard === 0 && b.shard === 1, "both joined");
    const refuse = (on: boolean) => fetch(new URL(`/rooms/${room}/refuse?on=${on ? 1 : 0}`, base), { method: "POST" });
    expect((await refuse(true)).status).toBe(200);
    const closed = new Promise<number>((resolve) => a.client.addEventListener("close", (event) => resolve(event.code), { once: true }));
    const first = a.publish(1);
    // 1 is on its way to the sequencer: 2 and 3 wait behind it, and fail with it.
    await sleep(50);
    const rest = [a.publish(2), a.publish(3)];
    expect(await closed).toBe(3010);
    expect(errors).toEqual(["ROOM_PUBLISH_FAILED a:0", "ROOM_PUBLISH_FAILED a:1", "ROOM_PUBLISH_FAILED a:2"]);
    expect((await refuse(false)).status).toBe(200);
    const seqs = await Promise.all([first, ...rest]);
    expect(seqs).toEqual([1, 2, 3]);
    await until(() => received.length === 3, "1..3 on b");
    expect(received.map((message) => message.data)).toEqual([1, 2, 3]);
  });

  it("answers a paused catch-up by itself: a member resuming from 0 after 3 MB of messages gets them all, then live ones", async () => {
    const room = fresh("loop-member-paced");
    const options = { host: base.host, basePath: `rooms/${room}`, minReconnectionDelay: 50, maxReconnectionDelay: 200 };
    const text = `${"x".repeat(65_000)}€`;
    const a = new RoomMember<{ n: number; text: string }>({ ...options, id: "a", query: { shards: "2", shard: "0" } });
    members.push(a);
    await Promise.all(Array.from({ length: 50 }, (_, i) => a.publish({ n: i + 1, text })));
    const received: RoomMessage<{ n: number; text: string }>[] = [];
    const b = new RoomMember<{ n: number; text: string }>({ ...options, id: "b", since: 0, query: { shards: "2", shard: "1" }, onRoomMessage: (message) => received.push(message) });
    members.push(b);
    await until(() => received.length === 50, "the 50 messages of the catch-up", 30_000);
    await a.publish({ n: 51, text: "live" });
    await until(() => received.length === 51, "the live message", 10_000);
    expect(received.map((message) => message.data.n)).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
  }, 60_000);
});
