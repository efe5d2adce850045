import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fresh, until } from "../helpers";
import { checkDelivery, openClients, type RoomClient } from "./room-client";

const shardStub = (room: string, index: number) => env.ROOM_CHAT_FAULTY.get(env.ROOM_CHAT_FAULTY.idFromName(`${room}#${index}`));
const sequencerStub = (room: string) => env.FAULTY_SEQUENCER.get(env.FAULTY_SEQUENCER.idFromName(room));
const ids = (publishers: readonly RoomClient[], count: number) => new Set(publishers.flatMap((p) => Array.from({ length: count }, (_, i) => `${p.id}-${i + 1}`)));

describe("a room whose objects fail a share of their calls to each other", () => {
  it("loses nothing and duplicates nothing when a fifth of the deliveries, publishes and pulls fail, with shards and the sequencer evicted and reset", async () => {
    const room = fresh("r-faults");
    const before = await sequencerStub(room).faultsInjected();
    const clients = await openClients(room, 4, 8, "c", { faulty: "1" });
    const publishers = [clients[0], clients[1], clients[6]] as RoomClient[];
    for (const publisher of publishers) publisher.resendEvery(400);
    const strikes = [
      () => evictDurableObject(shardStub(room, 1)),
      () => runInDurableObject(sequencerStub(room), (_instance, ctx) => ctx.abort("test: reset")).catch(() => {}),
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
    // The faults happened: the run went through failed calls, not around them.
    expect((await sequencerStub(room).faultsInjected()) - before).toBeGreaterThan(5);
    for (const client of clients) await client.close();
  });
});
