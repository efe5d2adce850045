// Rooms as real clients see them over loopback: Node's WebSocket through the Worker's router to two
// shards of one room; a delivery forged through the Worker (the route a shard claims for its
// sequencer) is refused with 410 and reaches nobody.
import { afterEach, describe, expect, inject, it } from "vitest";
import { fresh, sleep } from "./helpers";
import { publicIdOf as pub } from "../test/public-id";

const base = new URL(inject("workerUrl"));
const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const close of cleanup.splice(0)) close();
});

type Frame = Record<string, unknown> & { type: string };

/** Opens a room connection on shard `shard` (resuming after `since`, when given; answering a paused catch-up unless `answer` is false). @returns the socket and the JSON frames it receives */
async function join(room: string, id: string, shard: number, since?: number, answer = true): Promise<{ ws: WebSocket; frames: Frame[] }> {
  const url = new URL(`/rooms/${room}?shards=2&shard=${shard}&_pk=${id}${since === undefined ? "" : `&since=${since}`}`, base);
  url.protocol = "ws:";
  const ws = new WebSocket(url.href);
  cleanup.push(() => ws.readyState < 2 && ws.close());
  const frames: Frame[] = [];
  ws.addEventListener("message", (event) => {
    const frame = JSON.parse(String(event.data)) as Frame;
    frames.push(frame);
    // A paused catch-up: read this far, send the rest (as the dokit client does).
    if (frame.type === "dokit_room_more" && answer) ws.send(JSON.stringify({ type: "dokit_room_more", token: frame.token }));
  });
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
    expect(a.frames.find((frame) => frame.type === "dokit_room_welcome")).toEqual({ type: "dokit_room_welcome", room, shard: 0, seq: 0, count: 1, epoch: expect.stringMatching(/^\d{15}-[0-9a-f]{8}$/), you: pub("a") });
    expect(b.frames.find((frame) => frame.type === "dokit_room_welcome")).toMatchObject({ type: "dokit_room_welcome", room, shard: 1, seq: 0 });
    a.ws.send(JSON.stringify({ type: "dokit_room_publish", id: "m1", data: { text: "hello" } }));
    await until(() => b.frames.some((frame) => frame.type === "dokit_room") && a.frames.some((frame) => frame.type === "dokit_room_ack"));
    await sleep(200);
    expect(b.frames.filter((frame) => frame.type === "dokit_room")).toEqual([{ type: "dokit_room", seq: 1, from: pub("a"), data: { text: "hello" } }]);
    // The publisher gets its own message like everyone, and the ack (their order is not fixed: two paths).
    expect(a.frames.filter((frame) => frame.type === "dokit_room")).toEqual([{ type: "dokit_room", seq: 1, from: pub("a"), data: { text: "hello" } }]);
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
    expect(a.frames.filter((frame) => frame.type === "dokit_room")).toEqual([{ type: "dokit_room", seq: 1, from: pub("a"), data: { text: "real" } }]);
  });

  it("drains a shard: a real client gets 3009 promptly, reconnects to the shard that stays and resumes with since", async () => {
    const room = fresh("loop-drain");
    const stay = await join(room, "stay", 0);
    const moving = await join(room, "moving", 1);
    stay.ws.send(JSON.stringify({ type: "dokit_room_publish", id: "m1", data: 1 }));
    await until(() => moving.frames.some((frame) => frame.type === "dokit_room"));
    const closed = new Promise<{ code: number; reason: string }>((resolve) => moving.ws.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason })));
    const drained = await fetch(new URL(`/rooms/${room}/drain?shard=1`, base), { method: "POST" });
    expect(await drained.json()).toBe(1);
    const close = await Promise.race([closed, sleep(5000).then(() => ({ code: 0, reason: "no close within 5 s" }))]);
    expect(close).toEqual({ code: 3009, reason: "dokit: room shard drained; reconnect" });
    stay.ws.send(JSON.stringify({ type: "dokit_room_publish", id: "m2", data: 2 }));
    await until(() => stay.frames.filter((frame) => frame.type === "dokit_room").length === 2);
    // One shard left: the router sends the reconnect (hint 1 is out of range now) to shard 0.
    const url = new URL(`/rooms/${room}?shards=1&shard=1&_pk=moving&since=1`, base);
    url.protocol = "ws:";
    const back = new WebSocket(url.href);
    cleanup.push(() => back.readyState < 2 && back.close());
    const frames: Frame[] = [];
    back.addEventListener("message", (event) => frames.push(JSON.parse(String(event.data)) as Frame));
    await until(() => frames.some((frame) => frame.type === "dokit_room"));
    expect(frames.find((frame) => frame.type === "dokit_room_welcome")).toMatchObject({ shard: 0 });
    expect(frames.filter((frame) => frame.type === "dokit_room")).toEqual([{ type: "dokit_room", seq: 2, from: pub("stay"), data: 2 }]);
  });

  it("delivers a catch-up of 260 legal 64 KB messages, each with one non-Latin-1 character (34 MB as copied between objects), then live traffic", async () => {
    const room = fresh("loop-big-catchup");
    const a = await join(room, "a", 0);
    // 65,000 ASCII characters and one euro sign: 65,003 bytes as JSON, under the default maxMessageBytes (65,536).
    const text = `${"x".repeat(65_000)}€`;
    for (let n = 1; n <= 260; n++) a.ws.send(JSON.stringify({ type: "dokit_room_publish", id: `m${n}`, data: { n, text } }));
    await until(() => a.frames.filter((frame) => frame.type === "dokit_room_ack").length === 260, 30_000);
    const b = await join(room, "b", 1, 0);
    await until(() => b.frames.filter((frame) => frame.type === "dokit_room").length === 260, 30_000);
    a.ws.send(JSON.stringify({ type: "dokit_room_publish", id: "live", data: { n: 261, text: "live" } }));
    await until(() => b.frames.filter((frame) => frame.type === "dokit_room").length === 261, 10_000);
    const got = b.frames.filter((frame) => frame.type === "dokit_room") as unknown as { seq: number; data: { n: number; text: string } }[];
    expect(got.map((frame) => frame.seq)).toEqual(Array.from({ length: 261 }, (_, i) => i + 1));
    expect(got.every((frame, i) => frame.data.n === i + 1 && frame.data.text === (i < 260 ? text : "live"))).toBe(true);
  }, 120_000);

  it("delivers a catch-up of 34 messages of 1 MiB (the largest a room takes), each with one non-Latin-1 character, then live traffic", async () => {
    const room = fresh("loop-huge-catchup");
    // 1,048,000 ASCII characters and one euro sign: under 1 MiB as JSON.
    const text = `${"y".repeat(1_048_000)}€`;
    for (let n = 1; n <= 34; n++) {
      const response = await fetch(new URL(`/rooms/${room}/publish`, base), { method: "POST", body: JSON.stringify({ n, text }) });
      expect(await response.json()).toBe(n);
    }
    const b = await join(room, "b", 0, 0);
    await until(() => b.frames.filter((frame) => frame.type === "dokit_room").length === 34, 30_000);
    await fetch(new URL(`/rooms/${room}/publish`, base), { method: "POST", body: JSON.stringify({ n: 35, text: "live" }) });
    await until(() => b.frames.filter((frame) => frame.type === "dokit_room").length === 35, 10_000);
    const got = b.frames.filter((frame) => frame.type === "dokit_room") as unknown as { seq: number; data: { n: number; text: string } }[];
    expect(got.map((frame) => frame.seq)).toEqual(Array.from({ length: 35 }, (_, i) => i + 1));
    expect(got.every((frame, i) => frame.data.n === i + 1 && frame.data.text === (i < 34 ? text : "live"))).toBe(true);
  }, 120_000);

  it("paces a catch-up by what the client read: a client that never sends back the pause's token gets about 1 MiB of it, and the rest once it does", async () => {
    const room = fresh("loop-paced-catchup");
    const a = await join(room, "a", 0);
    const text = `${"x".repeat(65_000)}€`;
    for (let n = 1; n <= 260; n++) a.ws.send(JSON.stringify({ type: "dokit_room_publish", id: `m${n}`, data: { n, text } }));
    await until(() => a.frames.filter((frame) => frame.type === "dokit_room_ack").length === 260, 60_000);
    // The client that never reads: it does not send the token back, so the shard sends no more than a window.
    const b = await join(room, "b", 1, 0, false);
    await until(() => b.frames.some((frame) => frame.type === "dokit_room_more"), 10_000);
    await sleep(1000);
    const sent = b.frames.filter((frame) => frame.type === "dokit_room").length;
    // 1 MiB of frames of 65,049 characters: 17 of them (the 17th goes over), then the pause.
    expect(sent).toBe(17);
    expect(b.frames.filter((frame) => frame.type === "dokit_room_more")).toHaveLength(1);
    // A wrong token changes nothing; the right one brings the next window.
    b.ws.send(JSON.stringify({ type: "dokit_room_more", token: "guessed" }));
    await sleep(500);
    expect(b.frames.filter((frame) => frame.type === "dokit_room").length).toBe(17);
    for (let answered = 0; b.frames.filter((frame) => frame.type === "dokit_room").length < 260; ) {
      const pauses = b.frames.filter((frame) => frame.type === "dokit_room_more");
      for (const pause of pauses.slice(answered)) b.ws.send(JSON.stringify({ type: "dokit_room_more", token: pause.token }));
      answered = pauses.length;
      await sleep(50);
    }
    // Then it is live.
    a.ws.send(JSON.stringify({ type: "dokit_room_publish", id: "live", data: { n: 261, text: "live" } }));
    await until(() => b.frames.filter((frame) => frame.type === "dokit_room").length === 261, 10_000);
    expect((b.frames.filter((frame) => frame.type === "dokit_room") as unknown as { seq: number }[]).map((frame) => frame.seq)).toEqual(Array.from({ length: 261 }, (_, i) => i + 1));
  }, 120_000);
});
