import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fresh, sleep, until } from "../helpers";
import { checkDelivery, openClients, RoomClient } from "./room-client";
import { crash } from "../crash";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: { fetch(input: string, init?: RequestInit): Promise<Response> } }).default;
const shardStub = (room: string, index: number) => env.ROOM_CHAT.get(env.ROOM_CHAT.idFromName(`${room}#${index}`));
const sequencerStub = (room: string) => env.ROOM_SEQUENCER.get(env.ROOM_SEQUENCER.idFromName(room));
/** @returns the ids `<by>-<n>` of messages 1..count of each publisher */
const ids = (publishers: readonly RoomClient[], count: number) => new Set(publishers.flatMap((p) => Array.from({ length: count }, (_, i) => `${p.id}-${i + 1}`)));
const received = (clients: readonly RoomClient[], count: number) => () => clients.every((client) => client.messages.length >= count);
/** Resets an object as a crash would: its instance is gone, storage stays (the abort's error is the point). */
async function abort(stub: DurableObjectStub): Promise<void> {
  await crash(stub);
}

describe("rooms across objects", () => {
  it("delivers every message to every client of 3 shards exactly once, in one total order, publishers on two shards", async () => {
    const room = fresh("r-order");
    const clients = await openClients(room, 3, 6);
    expect(clients.map((client) => client.shard)).toEqual([0, 1, 2, 0, 1, 2]);
    const [a, b] = clients as [RoomClient, RoomClient];
    for (let n = 1; n <= 40; n++) {
      a.publish(n);
      b.publish(n);
    }
    await until(() => a.unacked.size === 0 && b.unacked.size === 0, "every publish acknowledged", 20_000);
    await until(received(clients, 80), "80 messages on every client", 20_000);
    const order = checkDelivery(clients, ids([a, b], 40));
    expect([...order.keys()].sort((x, y) => x - y)).toEqual(Array.from({ length: 80 }, (_, i) => i + 1));
    // The acks carry the seqs the clients received.
    for (const [id, seq] of [...a.acks, ...b.acks]) expect(order.get(seq)).toBe(id);
    for (const client of clients) await client.close();
  });

  it("keeps a shard in the room when a client arrives while its last one's close is taking it out", async () => {
    const room = fresh("r-rejoin");
    const [publisher, leaving] = (await openClients(room, 2, 2)) as [RoomClient, RoomClient];
    publisher.publish(1);
    await until(received([publisher, leaving], 1), "1 on both", 10_000);
    // The last client of shard 1 goes, and another comes while the shard leaves the room.
    const closing = leaving.close();
    const arriving = new RoomClient("arriving", room, { shards: "2" });
    await arriving.connect({ shard: 1 });
    await closing;
    expect(arriving.shard).toBe(1);
    publisher.publish(2);
    await until(() => publisher.messages.length >= 2, "2 on the publisher", 10_000);
    await until(() => arriving.messages.length >= 1, "2 on the client that arrived", 10_000);
    expect(arriving.messages.map((message) => message.data.n)).toEqual([2]);
    await publisher.close();
    await arriving.close();
  });

  it("loses nothing when shards are evicted and the sequencer is evicted and reset mid-run", async () => {
    const room = fresh("r-chaos");
    const clients = await openClients(room, 4, 8);
    const publishers = [clients[0], clients[2], clients[5]] as RoomClient[];
    for (const publisher of publishers) publisher.resendEvery(500);
    const chaos = [
      () => evictDurableObject(shardStub(room, 1)),
      () => abort(sequencerStub(room)),
      () => evictDurableObject(shardStub(room, 0)),
      () => evictDurableObject(sequencerStub(room)),
      () => abort(shardStub(room, 2)),
    ];
    let n = 0;
    let struck = 0;
    for (const strike of chaos) {
      for (let i = 0; i < 10; i++) {
        n++;
        for (const publisher of publishers) publisher.publish(n);
      }
      // evictDurableObject refuses an object that is not running: each strike must find its target running.
      await strike().then(() => struck++);
    }
    expect(struck).toBe(chaos.length);
    // An aborted shard drops its sockets: its clients reconnect with their last seq.
    await until(() => clients.filter((client) => client.shard === 2).every((client) => client.socket?.ws.readyState !== 1), "shard 2's sockets to drop", 10_000);
    for (const client of clients) {
      if (client.socket?.ws.readyState !== 1) await client.connect({ shard: client.shard, since: client.lastSeq });
    }
    await until(() => publishers.every((publisher) => publisher.unacked.size === 0), "every publish acknowledged", 30_000);
    await until(received(clients, 3 * n), `${3 * n} messages on every client`, 30_000);
    checkDelivery(clients, ids(publishers, n));
    for (const client of clients) await client.close();
  });

  it("gives a client resuming with since exactly what it missed, before live messages, on its shard or another", async () => {
    const room = fresh("r-resume");
    const [publisher, stay, moving] = (await openClients(room, 3, 3)) as [RoomClient, RoomClient, RoomClient];
    for (let n = 1; n <= 10; n++) publisher.publish(n);
    await until(received([stay, moving], 10), "the first 10", 10_000);
    await moving.close();
    for (let n = 11; n <= 20; n++) publisher.publish(n);
    await until(received([stay], 20), "the next 10", 10_000);
    // Back on shard 2 (which had no client left, so it left the room and joins again) after seq 10.
    const welcome = await moving.connect({ shard: 2, since: 10 });
    expect(welcome).toMatchObject({ type: "dokit_room_welcome", room, shard: 2 });
    await until(received([moving], 20), "the missed 10", 10_000);
    for (let n = 21; n <= 25; n++) publisher.publish(n);
    await until(received([stay, moving], 25), "5 live ones", 10_000);
    checkDelivery([stay, moving], ids([publisher], 25));
    // The resumed connection received 11..20 once: 10 before it left, 10 caught up, 5 live.
    expect(moving.messages.map((message) => message.seq)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    // A second resume, onto another shard that has a live client, from the middle.
    const late = new RoomClient("late", room, { shards: "3" });
    await late.connect({ shard: 1, since: 17 });
    await until(received([late], 8), "18..25", 10_000);
    expect(late.messages.map((message) => message.seq)).toEqual([18, 19, 20, 21, 22, 23, 24, 25]);
    for (const client of [publisher, stay, moving, late]) await client.close();
  });

  it("holds nothing for a client resuming past the room's head: it gets the next live messages, and no cursor stays stored", async () => {
    const room = fresh("r-past-head");
    const [a] = (await openClients(room, 1, 1)) as [RoomClient];
    for (let n = 1; n <= 3; n++) a.publish(n);
    await until(() => a.messages.length >= 3, "3 on a", 10_000);
    // Past the head (a hostile client, or a room whose storage was deleted): at most a floor at the head, which the next delivery passes.
    const clients = Array.from({ length: 20 }, (_, i) => new RoomClient(`far${i}`, room, { shards: "1" }));
    for (const client of clients) await client.connect({ shard: 0, since: 999_999_999_999_999 });
    for (let n = 4; n <= 5; n++) a.publish(n);
    await until(() => clients.every((client) => client.messages.length >= 2), "4 and 5 on every client that resumed past the head", 10_000);
    for (const client of clients) expect(client.messages.map((message) => message.seq)).toEqual([4, 5]);
    const stored = await runInDurableObject(shardStub(room, 0), async (_instance, ctx) => [...(await ctx.storage.list()).keys()].filter((key) => key.includes("cursor")));
    expect(stored).toEqual([]);
    for (const client of [a, ...clients]) await client.close();
  });

  it("keeps a paused catch-up's place through an eviction of the shard: the client's answer wakes it, and it goes on without a duplicate", async () => {
    const room = fresh("r-paced-evict");
    const [a] = (await openClients(room, 2, 1)) as [RoomClient];
    const text = `${"x".repeat(65_000)}€`;
    for (let n = 1; n <= 40; n++) a.send(JSON.stringify({ type: "dokit_room_publish", id: `big-${n}`, data: { by: "a", n, text } }));
    await until(() => a.acks.size === 40, "40 acks", 20_000);
    const b = new RoomClient("b", room, { shards: "2" });
    b.answerPauses = false;
    await b.connect({ shard: 1, since: 0 });
    const pauses = () => b.frames.filter((frame) => frame.type === "dokit_room_more");
    await until(() => pauses().length === 1, "the first pause", 10_000);
    expect(b.messages.length).toBe(17);
    await evictDurableObject(shardStub(room, 1));
    // The answer wakes the shard: it goes on from the stored place (the old instance's token is gone with it).
    b.socket?.send({ type: "dokit_room_more", token: pauses()[0]?.token });
    for (let answered = 1; b.messages.length < 40; ) {
      await until(() => pauses().length > answered || b.messages.length === 40, "the next pause or the end", 10_000);
      for (const pause of pauses().slice(answered)) b.socket?.send({ type: "dokit_room_more", token: pause.token });
      answered = pauses().length;
    }
    a.send(JSON.stringify({ type: "dokit_room_publish", id: "live", data: { by: "a", n: 41, text: "live" } }));
    await until(() => b.messages.length >= 41, "the live message", 10_000);
    await sleep(200);
    expect(b.messages.map((message) => message.seq)).toEqual(Array.from({ length: 41 }, (_, i) => i + 1));
    for (const client of [a, b]) await client.close();
  });

  it("tells a client resuming from before the log's window of the gap first, then sends the rest", async () => {
    const room = fresh("r-gap");
    for (let n = 1; n <= 12; n++) {
      const response = await worker.fetch(`http://example.com/publish/${room}?small=1`, { method: "POST", body: JSON.stringify({ by: "worker", n }) });
      expect(await response.json()).toEqual({ seq: n });
    }
    // The log keeps the newest 5 (8..12): a client that last saw seq 2 missed 3..7 for good.
    const client = new RoomClient("g", room, { shards: "2", small: "1" });
    await client.connect({ since: 2 });
    await until(() => client.messages.length >= 5, "8..12", 10_000);
    // Count frames come when the count changes, apart from the room's order.
    const frames = client.frames.filter((frame) => frame.type !== "dokit_room_count").map(({ type, from, to, seq }) => ({ type, ...(from !== undefined && { from }), ...(to !== undefined && { to }), ...(seq !== undefined && { seq }) }));
    expect(frames.slice(1, 2)).toMatchObject([{ type: "dokit_room_welcome", seq: 12 }]);
    expect(frames.slice(2)).toEqual([
      { type: "dokit_room_gap", from: 3, to: 7 },
      ...[8, 9, 10, 11, 12].map((seq) => ({ type: "dokit_room", seq })),
    ]);
    // Messages from the Worker carry no `from`.
    expect(client.messages[0]).toEqual({ type: "dokit_room", seq: 8, data: { by: "worker", n: 8 } });
    checkDelivery([client], new Set(["worker-8", "worker-12"]));
    await client.close();
  });

  it("drains a shard: its clients reconnect through the router to the shards that stay and miss nothing", async () => {
    const room = fresh("r-drain");
    const clients = await openClients(room, 3, 6);
    const publisher = clients[0] as RoomClient;
    for (let n = 1; n <= 10; n++) publisher.publish(n);
    await until(() => clients.every((client) => client.messages.length >= 10), "the first 10", 10_000);
    // The room shrinks to 2 shards: new connections (and reconnects) no longer go to shard 2.
    const drained = clients.filter((client) => client.shard === 2);
    for (const client of clients) client.query.shards = "2";
    const closed = await runInDurableObject(shardStub(room, 2), (instance: { room: { drain(): Promise<number> } }) => instance.room.drain());
    expect(closed).toBe(2);
    const closes = await Promise.all(drained.map((client) => client.socket?.closed));
    expect(closes).toEqual([
      { code: 3009, reason: "dokit: room shard drained; reconnect" },
      { code: 3009, reason: "dokit: room shard drained; reconnect" },
    ]);
    for (let n = 11; n <= 20; n++) publisher.publish(n);
    // They come back with their last seq and their old shard as a hint, which the router no longer honours.
    for (const client of drained) await client.connect({ shard: client.shard, since: client.lastSeq });
    expect(drained.every((client) => client.shard < 2)).toBe(true);
    for (let n = 21; n <= 25; n++) publisher.publish(n);
    await until(() => clients.every((client) => client.messages.length >= 25), "1..25 everywhere", 10_000);
    checkDelivery(clients, ids([publisher], 25));
    for (const client of clients) await client.close();
  });
});
