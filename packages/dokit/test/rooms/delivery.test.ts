import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fresh, sleep, until } from "../helpers";
import { checkDelivery, openClients, RoomClient } from "./room-client";
import { crash } from "../crash";
import { captureConsole } from "../logs";

const sequencerStub = (room: string) => env.ROOM_SEQUENCER.get(env.ROOM_SEQUENCER.idFromName(room));
/** Runs SQL in the room's sequencer (to play a lost confirmation or a lost delivery). @returns the rows */
const sequencerSql = (room: string, query: string, ...bindings: unknown[]) =>
  runInDurableObject(sequencerStub(room), (_instance, ctx) => ctx.storage.sql.exec(query, ...bindings).toArray());
const ids = (by: string, from: number, to: number) => new Set(Array.from({ length: to - from + 1 }, (_, i) => `${by}-${from + i}`));

describe("deliveries between a room's objects", () => {
  it("sends a repeated delivery (its confirmation was lost) to the clients once", async () => {
    const room = fresh("r-repeat");
    const clients = await openClients(room, 2, 4);
    const publisher = clients[0] as RoomClient;
    for (let n = 1; n <= 5; n++) publisher.publish(n);
    await until(() => clients.every((client) => client.messages.length >= 5), "the first 5", 10_000);
    // The sequencer forgets that the shards confirmed 1..5: it delivers them again with the next batch.
    await sequencerSql(room, "UPDATE dokit_room_shards SET cursor = 0");
    for (let n = 6; n <= 8; n++) publisher.publish(n);
    await until(() => clients.every((client) => client.messages.length >= 8), "6..8", 10_000);
    // Room for a duplicate to arrive, if the shards sent one.
    await sleep(300);
    checkDelivery(clients, ids(publisher.id, 1, 8));
    expect(clients.every((client) => client.messages.length === 8)).toBe(true);
    for (const client of clients) await client.close();
  });

  it("has a shard that missed deliveries pull them from the log before the next one", async () => {
    const room = fresh("r-pull");
    const clients = await openClients(room, 2, 4);
    const publisher = clients[0] as RoomClient;
    for (let n = 1; n <= 3; n++) publisher.publish(n);
    await until(() => clients.every((client) => client.messages.length >= 3), "the first 3", 10_000);
    // The sequencer believes shard 1 has 3 more than it has: its next delivery starts past a hole.
    await sequencerSql(room, "UPDATE dokit_room_shards SET cursor = cursor + 3 WHERE name = ?", `${room}#1`);
    for (let n = 4; n <= 9; n++) publisher.publish(n);
    await until(() => clients.every((client) => client.messages.length >= 9), "4..9", 10_000);
    checkDelivery(clients, ids(publisher.id, 1, 9));
    for (const client of clients) await client.close();
  });

  it.each([
    ["stores a batch a shard was holding when it was reset (storeWaiting), and sends it before later messages", "1"],
    ["loses nothing of a batch held in memory when the shard is reset: the client resends it, in order, on reconnect", "memory"],
  ])("%s", async (_title, slow) => {
    const room = fresh("r-outbox");
    const publisher = new RoomClient("p", room, { shards: "1", slow });
    const listener = new RoomClient("l", room, { shards: "1", slow });
    await publisher.connect();
    await listener.connect();
    // Gathered for a second: still waiting when the shard is reset (which drops its sockets).
    for (let n = 1; n <= 5; n++) publisher.publish(n);
    const stored = slow === "1";
    const namespace = stored ? env.ROOM_CHAT_SLOW : env.ROOM_CHAT_SLOW_MEMORY;
    const shard = namespace.get(namespace.idFromName(`${room}#0`));
    // The shard has the 5 (stored, or waiting in memory) before it is reset.
    const held = () =>
      runInDurableObject(shard, async (instance, ctx) =>
        stored ? (await ctx.storage.list({ prefix: "__dokit_room_out:" })).size : (instance as unknown as { room: { waiting(): number } }).room.waiting(),
      );
    for (let tries = 0; (await held()) < 5; tries++) {
      if (tries > 100) throw new Error("the shard never held the 5");
      await sleep(20);
    }
    await crash(shard);
    await until(() => publisher.socket?.ws.readyState !== 1 && listener.socket?.ws.readyState !== 1, "the sockets to drop", 10_000);
    // Both come back; the publisher resends 1..5 only when the shard did not store them.
    await listener.connect({ since: listener.lastSeq });
    await publisher.connect({ since: publisher.lastSeq, resend: !stored });
    for (let n = 6; n <= 8; n++) publisher.publish(n);
    await until(() => publisher.unacked.size === 0, "every publish acknowledged (1..5 on the new connection)", 10_000);
    await until(() => listener.messages.length >= 8, "1..8", 10_000);
    checkDelivery([publisher, listener], ids("p", 1, 8));
    expect(listener.messages.map((message) => message.data.n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    await publisher.close();
    await listener.close();
  });

  it("retries a delivery that failed from the sequencer's alarm", async () => {
    const room = fresh("r-retry");
    const logs = captureConsole();
    const clients = await openClients(room, 2, 2);
    const publisher = clients[0] as RoomClient;
    publisher.publish(1);
    await until(() => clients.every((client) => client.messages.length >= 1), "the first", 10_000);
    // Shard 1's binding name goes bad: its deliveries fail until it is mended.
    await sequencerSql(room, "UPDATE dokit_room_shards SET binding = 'NOT_A_BINDING' WHERE name = ?", `${room}#1`);
    for (let n = 2; n <= 4; n++) publisher.publish(n);
    await until(() => (clients[0] as RoomClient).messages.length >= 4, "2..4 on shard 0", 10_000);
    await sleep(300);
    expect((clients[1] as RoomClient).messages.length).toBe(1);
    const [row] = await sequencerSql(room, "SELECT failures FROM dokit_room_shards WHERE name = ?", `${room}#1`);
    expect((row as { failures: number }).failures).toBeGreaterThan(0);
    await sequencerSql(room, "UPDATE dokit_room_shards SET binding = 'ROOM_CHAT' WHERE name = ?", `${room}#1`);
    await until(() => (clients[1] as RoomClient).messages.length >= 4, "2..4 on shard 1, from the alarm", 15_000);
    expect(logs.warn.length).toBeGreaterThan(0);
    expect(logs.error).toEqual([]);
    for (const line of logs.warn) expect(line).toMatch(new RegExp(`^dokit: delivery to room shard ${room}#1 failed \\(\\d+ in a row\\); the sequencer's alarm retries it DokitError: .*env\\.NOT_A_BINDING is not a Durable Object binding`));
    checkDelivery(clients, ids(publisher.id, 1, 4));
    for (const client of clients) await client.close();
  });

  it("resumes a catch-up that a reset of the shard cut short, on the shard's next event", async () => {
    const room = fresh("r-catchup");
    const [publisher, resuming] = (await openClients(room, 2, 2)) as [RoomClient, RoomClient];
    for (let n = 1; n <= 3; n++) publisher.publish(n);
    await until(() => resuming.messages.length >= 3, "1..3", 10_000);
    // What a catch-up of `resuming` after seq 3 leaves in storage when its shard is reset mid-way.
    const shard = env.ROOM_CHAT.get(env.ROOM_CHAT.idFromName(`${room}#1`));
    await runInDurableObject(shard, (_instance, ctx) => ctx.storage.put("__dokit_room_cursors", { [resuming.id]: { at: 3, pending: true } }));
    await evictDurableObject(shard);
    // The next delivery wakes the shard, which resumes the catch-up from 3: 4..6 once, in order.
    for (let n = 4; n <= 6; n++) publisher.publish(n);
    await until(() => resuming.messages.length >= 6, "4..6 after the reset", 10_000);
    await sleep(200);
    checkDelivery([publisher, resuming], ids(publisher.id, 1, 6));
    expect(resuming.messages.map((message) => message.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    for (const client of [publisher, resuming]) await client.close();
  });
});
