// Rooms as real clients see them over loopback: Node's WebSocket through the Worker's router to two
// shards of one room; a delivery forged through the Worker (the route a shard claims for its
// sequencer) is refused with 410 and reaches nobody.
import { afterEach, describe, expect, inject, it } from "vitest";
import { fresh, sleep } from "./helpers";

const base = new URL(inject("workerUrl"));
const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const close of cleanup.splice(0)) close();
});

type Frame = Record<string, unknown> & { type: string };

/** Opens a room connection on shard `shard`. @returns the socket and the JSON frames it receives */
async function join(room: string, id: string, shard: number): Promise<{ ws: WebSocket; frames: Frame[] }> {
  const url = new URL(`/rooms/${room}?shards=2&shard=${shard}&_pk=${id}`, base);
  url.protocol = "ws:";
  const ws = new WebSocket(url.href);
  cleanup.push(() => ws.readyState < 2 && ws.close());
  const frames: Frame[] = [];
  ws.addEventListener("message", (event) => frames.push(JSON.parse(String(event.data)) as Frame));
  await new Promise((resolve) => ws.addEventListener("open", resolve));
  await until(() => frames.some((frame) => frame.type === "dokit_room_welcome"));
  return { ws, frames };
}

async function until(check: () => boolean, ms = 5000): Promise<void> {
  for (const end = Date.now() + ms; !check(); await sleep(10)) if (Date.now() > end) throw new Error("timed out");
}

describe("rooms over loopback", () => {
  it("routes real clients to two shards of one room; a publish reaches both, once, and is acknowledged", async () => {
    const room = fresh("loop-room");
    const a = await join(room, "a", 0);
    const b = await join(room, "b", 1);
    expect(a.frames.find((frame) => frame.type === "dokit_room_welcome")).toEqual({ type: "dokit_room_welcome", room, shard: 0, seq: 0, count: 1 });
    expect(b.frames.find((frame) => frame.type === "dokit_room_welcome")).toMatchObject({ type: "dokit_room_welcome", room, shard: 1, seq: 0 });
    a.ws.send(JSON.stringify({ type: "dokit_room_publish", id: "m1", data: { text: "hello" } }));
    await until(() => b.frames.some((frame) => frame.type === "dokit_room") && a.frames.some((frame) => frame.type === "dokit_room_ack"));
    await sleep(200);
    expect(b.frames.filter((frame) => frame.type === "dokit_room")).toEqual([{ type: "dokit_room", seq: 1, from: "a", data: { text: "hello" } }]);
    // The publisher gets its own message like everyone, and the ack (their order is not fixed: two paths).
    expect(a.frames.filter((frame) => frame.type === "dokit_room")).toEqual([{ type: "dokit_room", seq: 1, from: "a", data: { text: "hello" } }]);
    expect(a.frames.filter((frame) => frame.type === "dokit_room_ack")).toEqual([{ type: "dokit_room_ack", id: "m1", seq: 1 }]);
  });

  it("refuses a delivery forged through the Worker with 410: without the room's key nothing reaches the clients", async () => {
    const room = fresh("loop-forge");
    const a = await join(room, "a", 0);
    const forged = { messages: [{ seq: 1, data: '{"text":"forged"}' }], head: 1, count: 1 };
    // The shard's delivery route, reached the way routeAgentRequest reaches any object.
    const path = `/agents/rooms-loop-shard/${encodeURIComponent(`${room}#0`)}/__dokit_room/deliver`;
    for (const headers of [{}, { "x-dokit-room-key": "guessed" }] as Record<string, string>[]) {
      const response = await fetch(new URL(path, base), { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(forged) });
      expect(response.status).toBe(410);
      expect(await response.text()).toBe("not a member of the room");
    }
    // Through the room router the path is the room's, not the route: the shard's own handling answers.
    const routed = await fetch(new URL(`/rooms/${room}/__dokit_room/deliver?shard=0`, base), { method: "POST", body: JSON.stringify(forged) });
    expect(routed.status).not.toBe(200);
    await sleep(300);
    expect(a.frames.filter((frame) => frame.type === "dokit_room")).toEqual([]);
    // The room still works.
    a.ws.send(JSON.stringify({ type: "dokit_room_publish", id: "m1", data: { text: "real" } }));
    await until(() => a.frames.some((frame) => frame.type === "dokit_room"));
    expect(a.frames.filter((frame) => frame.type === "dokit_room")).toEqual([{ type: "dokit_room", seq: 1, from: "a", data: { text: "real" } }]);
  });
});
