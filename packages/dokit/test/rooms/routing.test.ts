import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hash } from "../../src/rooms/names";
import { fresh, until } from "../helpers";
import { checkDelivery, RoomClient } from "./room-client";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: { fetch(input: Request | string, init?: RequestInit): Promise<Response> } }).default;
/** @returns `count` client ids that the router's hash puts on shard `index` of `shards` */
function idsOnShard(index: number, shards: number, count: number, prefix: string): string[] {
  const ids: string[] = [];
  for (let i = 0; ids.length < count; i++) if (hash(`${prefix}${i}`) % shards === index) ids.push(`${prefix}${i}`);
  return ids;
}

describe("routing by load", () => {
  it("sends new clients past a shard at capacity to the next one, keeps the hash without a capacity, and answers 503 when every shard is full", async () => {
    const room = fresh("r-capacity");
    const ids = idsOnShard(0, 2, 5, "cap");
    const clients: RoomClient[] = [];
    // Capacity 2 over 2 shards: the hash says shard 0 for all five.
    for (const id of ids.slice(0, 4)) {
      const client = new RoomClient(id, room, { shards: "2", capacity: "2" });
      await client.connect();
      clients.push(client);
    }
    expect(clients.map((client) => client.shard)).toEqual([0, 0, 1, 1]);
    // Asking to stay on a full shard (a reconnect hint) is no exception: the room is full.
    const refused = await worker.fetch(new Request(`http://example.com/room/${room}?shards=2&capacity=2&_pk=${ids[4]}&shard=0`, { headers: { Upgrade: "websocket" } }));
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("5");
    await refused.body?.cancel();
    // The room still works across both shards.
    const publisher = clients[0] as RoomClient;
    for (let n = 1; n <= 5; n++) publisher.publish(n);
    await until(() => clients.every((client) => client.messages.length >= 5), "5 messages on every client", 10_000);
    checkDelivery(clients, new Set(Array.from({ length: 5 }, (_, i) => `${publisher.id}-${i + 1}`)));
    // One leaves shard 0: the next new client gets its place there.
    await (clients[1] as RoomClient).close();
    const late = new RoomClient(ids[4] as string, room, { shards: "2", capacity: "2" });
    await late.connect();
    expect(late.shard).toBe(0);
    // Without a capacity, the hash alone decides (no shard refuses).
    const other = fresh("r-nocap");
    const hashed = [];
    for (const id of ids.slice(0, 3)) {
      const client = new RoomClient(id, other, { shards: "2" });
      await client.connect();
      hashed.push(client);
    }
    expect(hashed.map((client) => client.shard)).toEqual([0, 0, 0]);
    for (const client of [...clients, late, ...hashed]) await client.close();
  });
});
