// Routing by load as a real client sees it over loopback: a shard at capacity sends the next client
// to another shard, and a room whose shards are all full refuses the upgrade with 503.
import { afterEach, describe, expect, inject, it } from "vitest";
import { WebSocket } from "ws";
import { fresh } from "./helpers";

const base = new URL(inject("workerUrl"));
const open: WebSocket[] = [];
afterEach(() => {
  for (const ws of open.splice(0)) ws.close();
});

/** Connects `id` to the room; @returns the shard of its welcome, or the HTTP status of a refused upgrade */
function connect(room: string, id: string, query: string): Promise<{ shard: number } | { status: number }> {
  const url = new URL(`/rooms/${room}?_pk=${id}&${query}`, base);
  url.protocol = "ws:";
  const ws = new WebSocket(url.href);
  open.push(ws);
  return new Promise((resolve, reject) => {
    ws.on("message", (data) => {
      const frame = JSON.parse(String(data)) as { type: string; shard?: number };
      if (frame.type === "dokit_room_welcome") resolve({ shard: frame.shard as number });
    });
    ws.on("unexpected-response", (_request, response) => resolve({ status: response.statusCode ?? 0 }));
    ws.on("error", reject);
  });
}

describe("routing by load over loopback", () => {
  it("puts the client past a full shard on the next one, and refuses with 503 once every shard is full", async () => {
    const room = fresh("loop-capacity");
    const query = "shards=2&capacity=1";
    // Each asks for shard 0 (a reconnect's hint): the first gets it, the second goes on to shard 1.
    expect(await connect(room, "a", `${query}&shard=0`)).toEqual({ shard: 0 });
    expect(await connect(room, "b", `${query}&shard=0`)).toEqual({ shard: 1 });
    expect(await connect(room, "c", `${query}&shard=0`)).toEqual({ status: 503 });
  });
});
