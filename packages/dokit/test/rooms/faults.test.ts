import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fresh, sleep, until } from "../helpers";
import { checkDelivery, openClients, type RoomClient } from "./room-client";
import { crash } from "../crash";
import { captureConsole } from "../logs";

const shardStub = (room: string, index: number) => env.ROOM_CHAT_FAULTY.get(env.ROOM_CHAT_FAULTY.idFromName(`${room}#${index}`));
const sequencerStub = (room: string) => env.FAULTY_SEQUENCER.get(env.FAULTY_SEQUENCER.idFromName(room));
const ids = (publishers: readonly RoomClient[], count: number) => new Set(publishers.flatMap((p) => Array.from({ length: count }, (_, i) => `${p.id}-${i + 1}`)));

describe("a room whose objects fail a share of their calls to each other", () => {
  it("loses nothing and duplicates nothing when a fifth of the deliveries, publishes and pulls fail, with shards and the sequencer evicted and reset", async () => {
    const room = fresh("r-faults");
    const logs = captureConsole(); // the faults' reports, checked below
    const before = await sequencerStub(room).faultsInjected();
    const clients = await openClients(room, 4, 8, "c", { faulty: "1" });
    const publishers = [clients[0], clients[1], clients[6]] as RoomClient[];
    for (const publisher of publishers) publisher.resendEvery(400);
    const strikes = [
      () => evictDurableObject(shardStub(room, 1)),
      () => crash(sequencerStub(room)),
      () => evictDurableObject(shardStub(room, 3)).catch(() => {}),
    ];
    let n = 0;
    for (const strike of strikes) {
      for (let i = 0; i < 10; i++) {
        n++;
        for (const publisher of publishers) publisher.publish(n);
      }
      await strike();
    }
    await until(() => publishers.every((publisher) => publisher.unacked.size === 0), "every publish acknowledged", 40_000);
    await until(() => clients.every((client) => client.messages.length >= 3 * n), `${3 * n} messages on every client`, 40_000);
    const order = checkDelivery(clients, ids(publishers, n));
    expect(order.size).toBe(3 * n);
    // The faults happened: the run went through failed calls, not around them. Each call fails at random, and how
    // many calls a run makes depends on how the publishes batch, so only "some" is certain.
    expect((await sequencerStub(room).faultsInjected()) - before).toBeGreaterThan(0);
    expect([...logs.error, ...logs.warn].filter((line) => !/^dokit: (delivery to room shard \S+ failed \(\d+ in a row\); the sequencer's alarm retries it|a room shard could not publish to its room's sequencer):? Error: test: injected fault \(/.test(line))).toEqual([]);
    for (const client of clients) await client.close();
  });

  it("fails a publisher's waiting messages with the batch that failed every retry, closes it (3010), and orders them as sent when it sends them again", async () => {
    const room = fresh("r-refused");
    const logs = captureConsole();
    const [publisher, listener] = (await openClients(room, 2, 2, "p", { faulty: "1" })) as [RoomClient, RoomClient];
    await sequencerStub(room).refusePublishes(true);
    publisher.publish(1);
    // 1 is in flight (gathered for 10 ms): 2 and 3 wait behind it.
    await sleep(50);
    publisher.publish(2);
    publisher.publish(3);
    // Sent once the failures are on their way, before the close reaches the client: the shard must not take it.
    let late = false;
    publisher.socket?.ws.addEventListener("message", (event) => {
      if (!late && String(event.data).includes('"ROOM_PUBLISH_FAILED"')) {
        late = true;
        publisher.publish(4);
      }
    });
    await until(() => publisher.publishFailedCloses === 1, "the publisher closed with 3010 (after 4 tries, about 2.6 s)", 10_000);
    const refused = publisher.frames.filter((frame) => frame.type === "dokit_error").map((frame) => [frame.code, frame.id]);
    expect(refused).toEqual([1, 2, 3].map((n) => ["ROOM_PUBLISH_FAILED", `p0-${n}`]));
    await sequencerStub(room).refusePublishes(false);
    await until(() => publisher.unacked.size === 0, "1..4 acknowledged after the reconnect", 10_000);
    await until(() => listener.messages.length >= 4 && publisher.messages.length >= 4, "1..4 on both", 10_000);
    const order = checkDelivery([publisher, listener], ids([publisher], 4));
    expect([...order.values()]).toEqual(["p0-1", "p0-2", "p0-3", "p0-4"]);
    expect([1, 2, 3, 4].map((n) => publisher.acks.get(`p0-${n}`))).toEqual([1, 2, 3, 4]);
    expect(publisher.publishFailedCloses).toBe(1);
    expect(logs.error.length + logs.warn.length).toBeGreaterThan(0);
    expect([...logs.error, ...logs.warn].filter((line) => !/^dokit: (delivery to room shard \S+ failed \(\d+ in a row\); the sequencer's alarm retries it|a room shard could not publish to its room's sequencer):? Error: test: injected fault \(/.test(line))).toEqual([]);
    await publisher.close();
    await listener.close();
  });

  it("rejects server code's waiting publishes with the one that failed every retry, and takes the next", async () => {
    const room = fresh("r-refused-server");
    const logs = captureConsole();
    const [listener] = (await openClients(room, 1, 1, "l", { faulty: "1" })) as [RoomClient];
    await sequencerStub(room).refusePublishes(true);
    const outcomes = await runInDurableObject(shardStub(room, 0), async (instance) => {
      const shard = (instance as unknown as { room: { publish(data: unknown): Promise<number> } }).room;
      const first = shard.publish({ by: "server", n: 1 });
      await sleep(50);
      const second = shard.publish({ by: "server", n: 2 });
      const settled = [first, second].map((published) => published.then(String, (error: { code?: string }) => `rejected ${error.code}`));
      // The sequencer takes publishes again as soon as the first failed: the second failed with it, or it would be taken now.
      await settled[0];
      await sequencerStub(room).refusePublishes(false);
      return Promise.all(settled);
    });
    expect(outcomes).toEqual(["rejected ROOM_PUBLISH_FAILED", "rejected ROOM_PUBLISH_FAILED"]);
    const seq = await runInDurableObject(shardStub(room, 0), (instance) => (instance as unknown as { room: { publish(data: unknown): Promise<number> } }).room.publish({ by: "server", n: 3 }));
    expect(seq).toBe(1);
    await until(() => listener.messages.length >= 1, "3 on the listener", 10_000);
    expect(listener.messages.map((message) => message.data.n)).toEqual([3]);
    expect(logs.error.length + logs.warn.length).toBeGreaterThan(0);
    expect([...logs.error, ...logs.warn].filter((line) => !/^dokit: (delivery to room shard \S+ failed \(\d+ in a row\); the sequencer's alarm retries it|a room shard could not publish to its room's sequencer):? Error: test: injected fault \(/.test(line))).toEqual([]);
    await listener.close();
  });
});
