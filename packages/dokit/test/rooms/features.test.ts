import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { publishToRoom } from "../../src/rooms";
import { fresh, sleep, until } from "../helpers";
import { checkDelivery, openClients, RoomClient } from "./room-client";

const sequencerStub = (room: string) => env.ROOM_SEQUENCER.get(env.ROOM_SEQUENCER.idFromName(room));
const datas = (client: RoomClient) => client.messages.map((message) => message.data);

describe("room features", () => {
  it("deduplicates a message sent twice (same id) and acknowledges both with its one seq", async () => {
    const room = fresh("r-dedup");
    const [a, b] = (await openClients(room, 2, 2)) as [RoomClient, RoomClient];
    a.publish(1);
    a.publish(1);
    a.publish(2);
    await until(() => b.messages.length >= 2 && a.unacked.size === 0, "1 and 2", 10_000);
    await sleep(200);
    expect(b.messages.map((message) => [message.seq, message.data.n])).toEqual([[1, 1], [2, 2]]);
    const acks = a.frames.filter((frame) => frame.type === "dokit_room_ack").map((frame) => [frame.id, frame.seq]);
    expect(acks).toEqual([["c0-1", 1], ["c0-1", 1], ["c0-2", 2]]);
    await a.close();
    await b.close();
  });

  it("does not take another publisher's message for a retry: an attacker with the victim's id on another shard who publishes its predictable ids first swallows nothing", async () => {
    const room = fresh("r-dedup-poison");
    const [victim, watcher] = (await openClients(room, 2, 2, "v")) as [RoomClient, RoomClient];
    // The attacker connects with the victim's id on the other shard (so the victim is not replaced) and publishes the ids the victim will use next.
    const attacker = new RoomClient("v0", room, { shards: "2" });
    await attacker.connect({ shard: 1 });
    for (let n = 1; n <= 3; n++) attacker.send(JSON.stringify({ type: "dokit_room_publish", id: `v0-${n}`, data: { by: "evil", n } }));
    await until(() => watcher.messages.length >= 3, "the attacker's 3 messages", 10_000);
    for (let n = 1; n <= 3; n++) victim.publish(n);
    await until(() => victim.unacked.size === 0, "the victim's 3 acks", 10_000);
    await until(() => watcher.messages.length >= 6, "the victim's 3 messages on the watcher", 10_000);
    await sleep(200);
    // Every seq the victim was acknowledged with carries the victim's own content, on every client.
    for (const client of [victim, watcher]) {
      const bySeq = new Map(client.messages.map((message) => [message.seq, message.data]));
      expect([...victim.acks].map(([id, seq]) => [id, bySeq.get(seq)])).toEqual([1, 2, 3].map((n) => [`v0-${n}`, { by: "v0", n }]));
    }
    expect(watcher.messages.map((message) => message.data.by)).toEqual(["evil", "evil", "evil", "v0", "v0", "v0"]);
    // A real retry (the same id and content) is still one message.
    victim.send(JSON.stringify({ type: "dokit_room_publish", id: "v0-1", data: { by: "v0", n: 1 } }));
    await sleep(300);
    expect(watcher.messages).toHaveLength(6);
    for (const client of [victim, watcher, attacker]) await client.close();
  });

  it("carries except and tag filters, and server publishes, room-wide", async () => {
    const room = fresh("r-filters");
    const plain = await openClients(room, 3, 3, "p");
    const tagged = await openClients(room, 3, 3, "t", { tag: "staff" });
    const all = [...plain, ...tagged];
    const sender = plain[1] as RoomClient;
    sender.send(`except-me:${JSON.stringify({ by: "server", n: 1 })}`);
    sender.send(`tag:staff:${JSON.stringify({ by: "server", n: 2 })}`);
    sender.send(`server:${JSON.stringify({ by: "server", n: 3 })}`);
    await until(() => sender.texts.includes("published:3"), "the server publish's seq", 10_000);
    await until(() => all.every((client) => client.messages.some((message) => message.seq === 3)), "seq 3 everywhere", 10_000);
    await sleep(200);
    for (const client of all) {
      const expected = [client === sender ? [] : [{ by: "server", n: 1 }], tagged.includes(client) ? [{ by: "server", n: 2 }] : [], [{ by: "server", n: 3 }]].flat();
      expect(datas(client), client.id).toEqual(expected);
    }
    // Server messages carry no `from`; a client's carries its connection id.
    expect(Object.hasOwn(tagged[0]?.messages[0] ?? {}, "from")).toBe(false);
    sender.publish(4);
    await until(() => all.every((client) => client.messages.some((message) => message.data.n === 4)), "a client's publish", 10_000);
    expect(tagged[0]?.messages.at(-1)).toMatchObject({ from: sender.publicId, data: { by: sender.id, n: 4 } });
    for (const client of all) await client.close();
  });

  it("refuses a malformed publish with a dokit_error frame naming its id, and keeps serving", async () => {
    const room = fresh("r-refuse");
    const [a, b] = (await openClients(room, 1, 2)) as [RoomClient, RoomClient];
    a.socket?.send({ type: "dokit_room_publish", id: 7, data: 1 });
    a.socket?.send({ type: "dokit_room_publish", id: "no-data" });
    a.socket?.send({ type: "dokit_room_publish", id: "x".repeat(129), data: 1 });
    a.socket?.send({ type: "dokit_room_publish", id: "big", data: "x".repeat(70_000) });
    await until(() => a.frames.filter((frame) => frame.type === "dokit_error").length >= 4, "four refusals", 10_000);
    expect(a.frames.filter((frame) => frame.type === "dokit_error")).toEqual([
      { type: "dokit_error", code: "ROOM_REJECTED", error: "id must be a string of 1 to 128 characters" },
      { type: "dokit_error", code: "ROOM_REJECTED", error: "data is missing", id: "no-data" },
      { type: "dokit_error", code: "ROOM_REJECTED", error: "id must be a string of 1 to 128 characters", id: "x".repeat(129) },
      { type: "dokit_error", code: "ROOM_REJECTED", error: "data over 65536 bytes", id: "big" },
    ]);
    a.publish(1);
    await until(() => b.messages.length === 1, "a good publish after the bad ones", 10_000);
    checkDelivery([a, b], new Set(["c0-1"]));
    // A connection canPublish refuses is told so, and nothing is published.
    const muted = new RoomClient("m", room, { shards: "1", tag: "muted" });
    await muted.connect();
    muted.publish(1);
    await until(() => muted.frames.some((frame) => frame.type === "dokit_error"), "the refusal", 10_000);
    expect(muted.frames.find((frame) => frame.type === "dokit_error")).toEqual({ type: "dokit_error", code: "ROOM_REJECTED", error: "This connection may not publish", id: "m-1" });
    await sleep(200);
    expect(b.messages.length).toBe(1);
    await muted.close();
    // Server code hears of a body too large; nothing is published.
    await expect(publishToRoom(env, room, "x".repeat(1_100_000))).rejects.toThrow(/over 1048576 bytes/);
    // A since that is no seq is refused visibly; the connection joins live.
    const c = new RoomClient("c", room, { shards: "1", since: "yesterday" });
    await c.connect();
    expect(c.frames.find((frame) => frame.type === "dokit_error")).toEqual({ type: "dokit_error", code: "ROOM_REJECTED", error: "since must be a seq: a whole number" });
    for (const client of [a, b, c]) await client.close();
  });

  it("counts a connection in its welcome, with the connections before it on its shard, before the sequencer hears of them", async () => {
    const room = fresh("r-welcome-count");
    const counts: number[] = [];
    const clients: RoomClient[] = [];
    // Two on shard 0, two on shard 1, one on shard 0: the second of each pair joins before its shard's
    // count report (countMs 50) reaches the sequencer; between the pairs the reports have landed.
    for (const [i, shard] of [0, 0, 1, 1, 0].entries()) {
      if (i === 2 || i === 4) await sleep(300);
      const client = new RoomClient(`w${i}`, room, { shards: "2" });
      counts.push((await client.connect({ shard })).count as number);
      clients.push(client);
    }
    expect(counts).toEqual([1, 2, 3, 4, 5]);
    for (const client of clients) await client.close();
  });

  it("keeps a room-wide count, unregisters shards whose clients left, and leaves an idle room without alarms", async () => {
    const room = fresh("r-count");
    const clients = await openClients(room, 3, 6);
    const ask = async (client: RoomClient, count: number) => {
      await until(() => {
        client.send("count");
        return client.texts.includes(`count:${count}`);
      }, `a count of ${count} on ${client.id}`, 10_000);
    };
    clients[0]?.publish(1);
    await ask(clients[2] as RoomClient, 6);
    for (const client of clients.slice(3)) await client.close();
    await ask(clients[1] as RoomClient, 3);
    const members = () => runInDurableObject(sequencerStub(room), (_instance, ctx) => ctx.storage.sql.exec("SELECT name FROM dokit_room_shards ORDER BY name").toArray().map((row) => row.name));
    expect(await members()).toEqual([`${room}#0`, `${room}#1`, `${room}#2`]);
    await clients[2]?.close();
    for (let tries = 0; (await members()).length !== 2; tries++) {
      if (tries > 200) throw new Error("shard 2 never left");
      await sleep(20);
    }
    await clients[0]?.close();
    await clients[1]?.close();
    for (let tries = 0; (await members()).length !== 0; tries++) {
      if (tries > 200) throw new Error("the shards never left");
      await sleep(20);
    }
    // No alarm stays armed once every shard is caught up (at most one fires after the last publish).
    const alarm = () => runInDurableObject(sequencerStub(room), (_instance, ctx) => ctx.storage.getAlarm());
    for (let tries = 0; (await alarm()) !== null; tries++) {
      if (tries > 200) throw new Error("an alarm stayed armed");
      await sleep(20);
    }
  });
});
