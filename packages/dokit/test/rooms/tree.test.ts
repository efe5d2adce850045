import { evictDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fresh, until } from "../helpers";
import { checkDelivery, openClients, type RoomClient } from "./room-client";
import { crash } from "../crash";

const relayStub = (name: string) => env.TEST_RELAY.get(env.TEST_RELAY.idFromName(name));
const ids = (publishers: readonly RoomClient[], count: number) => new Set(publishers.flatMap((p) => Array.from({ length: count }, (_, i) => `${p.id}-${i + 1}`)));

describe("the fan-out tree of relays", () => {
  it("delivers to 7 shards through relays (2 calls per object at most), each message once and in order, with a relay reset mid-run", async () => {
    const room = fresh("r-tree");
    const before = await relayStub("probe").relayed();
    const clients = await openClients(room, 7, 14, "c", { tree: "1" });
    const publishers = [clients[0], clients[3], clients[5]] as RoomClient[];
    for (const publisher of publishers) publisher.resendEvery(400);
    let n = 0;
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 10; i++) {
        n++;
        for (const publisher of publishers) publisher.publish(n);
      }
      // 7 shards, 2 wide: relays 0 and 1 under the sequencer, 0.0, 0.1, 1.0, 1.1 under them.
      if (round === 0) await crash(relayStub(`${room}~relay~0`));
      if (round === 1) await evictDurableObject(relayStub(`${room}~relay~1.0`)).catch(() => {});
    }
    await until(() => publishers.every((publisher) => publisher.unacked.size === 0), "every publish acknowledged", 30_000);
    await until(() => clients.every((client) => client.messages.length >= 3 * n), `${3 * n} messages on every client`, 30_000);
    checkDelivery(clients, ids(publishers, n));
    // The shards were reached through relays, not by the sequencer alone.
    expect((await relayStub("probe").relayed()) - before).toBeGreaterThanOrEqual(7);
    for (const client of clients) await client.close();
  });
});
