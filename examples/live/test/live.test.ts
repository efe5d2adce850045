import { exports } from "cloudflare:workers";
import { RoomMember, type RoomMessage } from "dokit/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { fresh } from "../../test-helpers";
import { type LiveMessage, readLiveMessage } from "../src/api";
import { useWorkerWebSockets } from "./worker-websocket";

// The Worker's own fetch (typed by GlobalProps in env.d.ts): requests go through its routing.
const worker = exports.default;
let restore: () => void;
beforeAll(() => void (restore = useWorkerWebSockets()));
afterAll(() => restore());

/** A viewer: dokit's RoomMember, as the page's useRoom holds it, with what it received and its closes. */
type Viewer = { member: RoomMember<LiveMessage>; received: RoomMessage<LiveMessage>[]; closes: number[] };
const viewers: Viewer[] = [];
afterEach(() => {
  for (const viewer of viewers.splice(0)) viewer.member.close();
});

/** Joins `room` as a viewer, on `shard` when given (the page's `?shard=`). */
function view(room: string, options: { shard?: number; since?: number } = {}): Viewer {
  const received: RoomMessage<LiveMessage>[] = [];
  const closes: number[] = [];
  const member = new RoomMember<LiveMessage>({
    host: "example.com",
    basePath: `room/${room}`,
    ...(options.shard !== undefined && { query: { shard: String(options.shard) } }),
    ...(options.since !== undefined && { since: options.since }),
    minReconnectionDelay: 50,
    maxReconnectionDelay: 200,
    onRoomMessage: (message) => received.push(message),
  });
  member.client.addEventListener("close", (event) => void closes.push((event as CloseEvent).code));
  const viewer = { member, received, closes };
  viewers.push(viewer);
  return viewer;
}

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !check(); await new Promise((resolve) => setTimeout(resolve, 10))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
}

const joined = (...list: Viewer[]) => until(() => list.every((viewer) => viewer.member.shard !== undefined && viewer.member.client.readyState === 1), "the viewers' welcomes");
const say = (name: string, text: string): LiveMessage => ({ kind: "say", name, text });
/** @returns what a viewer shows: seq and text of each line, in the order received */
const shown = (viewer: Viewer) => viewer.received.map(({ seq, data }) => `${seq} ${data.kind === "react" ? data.emoji : data.text}`);

describe("live", () => {
  it("serves the page and its bundled script", async () => {
    const page = await worker.fetch("http://example.com/");
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(await page.text()).toContain('<script type="module" src="page.js">');
    const script = await worker.fetch("http://example.com/page.js");
    expect(script.headers.get("content-type")).toContain("javascript");
    expect((await script.text()).length).toBeGreaterThan(1000);
  });

  it("gives every viewer, on every shard, the messages of viewers on two shards and the host's, once and in one order", async () => {
    const room = fresh("order");
    const ann = view(room, { shard: 0 });
    const bob = view(room, { shard: 1 });
    const cy = view(room, { shard: 1 });
    await joined(ann, bob, cy);
    expect([ann, bob, cy].map((viewer) => viewer.member.shard)).toEqual([0, 1, 1]);
    // The room-wide count reaches every viewer, on both shards (count frames follow each change).
    await until(() => [ann, bob, cy].every((viewer) => viewer.member.count === 3), "a count of 3 on every viewer");

    const published: Promise<number>[] = [];
    for (let n = 1; n <= 10; n++) published.push(ann.member.publish(say("Ann", `ann ${n}`)), bob.member.publish(say("Bob", `bob ${n}`)));
    const host = await worker.fetch(`http://example.com/room/${room}/announce`, { method: "POST", body: JSON.stringify({ text: "Q&A starts now" }) });
    expect(host.status).toBe(200);
    const { seq: announced } = await host.json<{ seq: number }>();
    const seqs = await Promise.all(published);
    expect(new Set([...seqs, announced]).size).toBe(21);

    await until(() => [ann, bob, cy].every((viewer) => viewer.received.length >= 21), "21 messages on every viewer");
    const order = shown(ann);
    expect(ann.received.map(({ seq }) => seq)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    expect(shown(bob)).toEqual(order);
    expect(shown(cy)).toEqual(order);
    // Each publisher's messages in the order it sent them; each ack is the seq every viewer got it at.
    for (const name of ["ann", "bob"]) {
      expect(order.filter((line) => line.includes(` ${name} `)).map((line) => line.split(" ").at(-1))).toEqual(Array.from({ length: 10 }, (_, i) => String(i + 1)));
    }
    seqs.forEach((seq, i) => expect(order[seq - 1]).toBe(`${seq} ${i % 2 ? "bob" : "ann"} ${Math.floor(i / 2) + 1}`));
    // The host's announcement came from the Worker: no connection id, so the page shows it as the host's.
    const announcement = cy.received[announced - 1] as RoomMessage<LiveMessage>;
    expect(announcement.from).toBeUndefined();
    expect(readLiveMessage(announcement.data, announcement.from)).toEqual({ kind: "announce", text: "Q&A starts now" });
    expect(ann.received.find((message) => message.data.kind === "say")?.from).toBe(ann.member.self);
  });

  it("a viewer that went away gets what it missed once, and what it posted while away goes out when it is back", async () => {
    const room = fresh("resume");
    const ann = view(room, { shard: 0 });
    const bob = view(room, { shard: 2 });
    await joined(ann, bob);
    for (let n = 1; n <= 3; n++) await ann.member.publish(say("Ann", `before ${n}`));
    await until(() => bob.received.length === 3, "the first 3 on bob");

    bob.member.client.close();
    for (let n = 1; n <= 3; n++) await ann.member.publish(say("Ann", `while bob is away ${n}`));
    let sent: number | undefined;
    void bob.member.publish(say("Bob", "typed while away")).then((seq) => (sent = seq));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sent).toBeUndefined();
    expect(bob.received).toHaveLength(3);

    bob.member.client.reconnect();
    await until(() => sent !== undefined && ann.received.length === 7 && bob.received.length === 7, "bob back with what he missed and his own");
    expect(bob.member.shard).toBe(2);
    expect(sent).toBe(7);
    expect(shown(bob)).toEqual(shown(ann));
    expect(shown(bob).slice(3)).toEqual(["4 while bob is away 1", "5 while bob is away 2", "6 while bob is away 3", "7 typed while away"]);

    // A new page that remembered seq 5 resumes after it, on another shard; one that starts from 0 gets the backlog.
    const later = view(room, { shard: 3, since: 5 });
    const late = view(room, { shard: 1, since: 0 });
    await until(() => later.received.length === 2 && late.received.length === 7, "the resumed and the late viewers' catch-up");
    expect(shown(later)).toEqual(shown(ann).slice(5));
    expect(shown(late)).toEqual(shown(ann));
  });

  it("draining a shard: its viewers reconnect by themselves and miss nothing, and the others notice nothing", async () => {
    const room = fresh("drain");
    const ann = view(room, { shard: 0 });
    const bob = view(room, { shard: 1 });
    const cy = view(room, { shard: 1 });
    await joined(ann, bob, cy);
    await ann.member.publish(say("Ann", "first"));

    const drained = await worker.fetch(`http://example.com/room/${room}/drain?shard=1`, { method: "POST" });
    expect(await drained.json()).toEqual({ closed: 2 });
    // Published while shard 1's viewers are away, from the shard that stays and from one of them.
    const more = [ann.member.publish(say("Ann", "during the drain")), bob.member.publish(say("Bob", "mine, resent when back")), ann.member.publish(say("Ann", "last"))];
    await Promise.all(more);
    await until(() => [ann, bob, cy].every((viewer) => viewer.received.length === 4), "4 messages on every viewer");
    for (const viewer of [bob, cy]) {
      expect(viewer.closes[0]).toBe(3009);
      expect(viewer.member.shard).toBe(1);
    }
    expect(ann.closes).toEqual([]);
    expect(shown(bob)).toEqual(shown(ann));
    expect(shown(cy)).toEqual(shown(ann));
    expect(shown(ann).map((line) => line.split(" ")[0])).toEqual(["1", "2", "3", "4"]);
  });

  it("answers bad requests plainly, refuses an oversized message to its sender only, and serves a shard's inspector on localhost", async () => {
    expect((await worker.fetch("http://example.com/room/bad%20name")).status).toBe(400);
    expect((await worker.fetch("http://example.com/room/ok/drain?shard=4", { method: "POST" })).status).toBe(400);
    expect((await worker.fetch("http://example.com/room/ok/drain", { method: "POST" })).status).toBe(400);
    expect((await worker.fetch("http://example.com/room/ok/announce", { method: "POST", body: "{}" })).status).toBe(400);
    expect((await worker.fetch("http://example.com/room/ok/announce", { method: "POST", body: "not json" })).status).toBe(400);
    expect((await worker.fetch("http://example.com/room/ok/other", { method: "POST" })).status).toBe(404);

    const room = fresh("bounds");
    const ann = view(room, { shard: 0 });
    const bob = view(room, { shard: 1 });
    await joined(ann, bob);
    await expect(ann.member.publish(say("Ann", "x".repeat(3000)))).rejects.toThrow(/the room refused the message/);
    expect(await ann.member.publish(say("Ann", "small"))).toBe(1);
    await until(() => bob.received.length === 1, "the small one on bob");
    expect(shown(bob)).toEqual(["1 small"]);
    // A viewer cannot pass its message off as the host's.
    expect(readLiveMessage({ kind: "announce", text: "fake" }, ann.member.client.id)).toBeUndefined();

    const inspector = await worker.fetch(`http://localhost/agents/live-shard/${room}%230/__dokit`);
    expect(inspector.status).toBe(200);
    expect(await inspector.text()).toContain("<title>dokit inspector</title>");
    // The other routes of a shard are not reachable by name: viewers join through the router.
    expect((await worker.fetch(`http://localhost/agents/live-shard/${room}%230`)).status).toBe(404);
  });
});
