import { evictDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fresh, sleep, until } from "../helpers";
import { captureConsole } from "../logs";
import { checkDelivery, openClients, type RoomClient } from "./room-client";
import { crash } from "../crash";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: { fetch(input: string, init?: RequestInit): Promise<Response> } }).default;
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

  it("delivers 34 messages of 1 MiB with a non-Latin-1 character each through relays after a relay outage (each delivery bounded in bytes), then live ones", async () => {
    const logs = captureConsole();
    const room = fresh("r-tree-big");
    const clients = await openClients(room, 3, 3, "c", { tree: "1" });
    const publish = async (data: unknown) => (await (await worker.fetch(`http://example.com/publish/${room}?tree=1`, { method: "POST", body: JSON.stringify(data) })).json()) as { seq: number };
    // 1,048,000 ASCII characters and one euro sign: under 1 MiB as JSON; 34 of them are over 32 MiB as copied (2 bytes per character).
    const text = `${"y".repeat(1_048_000)}€`;
    await relayStub("probe").outage(true);
    for (let n = 1; n <= 34; n++) expect(await publish({ n, text })).toEqual({ seq: n });
    await sleep(300);
    await relayStub("probe").outage(false);
    // The next publish delivers at once (the failures of the outage put the alarm's retry far off).
    expect(await publish({ n: 35, text: "live" })).toEqual({ seq: 35 });
    await until(() => clients.every((client) => client.messages.length >= 35), "35 messages on every client", 30_000);
    for (const client of clients) {
      expect(client.messages.map((message) => message.seq)).toEqual(Array.from({ length: 35 }, (_, i) => i + 1));
      expect(client.messages.every((message, i) => (message.data as unknown as { text: string }).text === (i < 34 ? text : "live"))).toBe(true);
    }
    // The outage's failed deliveries were logged, and nothing else.
    expect(logs.warn.length).toBeGreaterThan(0);
    expect(logs.warn.every((line) => line.includes("test: relay outage"))).toBe(true);
    expect(logs.error).toEqual([]);
    for (const client of clients) await client.close();
  }, 120_000);
});
