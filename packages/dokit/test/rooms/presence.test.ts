import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { openSocket, type TestSocket } from "../../src/testing";
import { fresh, sleep, until } from "../helpers";
import { byPublicId, type Frame, RoomClient } from "./room-client";
import { crash } from "../crash";
import { captureConsole } from "../logs";

const shardStub = (room: string, index: number) => env.ROOM_PRESENCE_CHAT.get(env.ROOM_PRESENCE_CHAT.idFromName(`${room}#${index}`));
const sequencerStub = (room: string) => env.PRESENCE_SEQUENCER.get(env.PRESENCE_SEQUENCER.idFromName(room));
/** Resets an object as a crash would: its instance is gone, storage stays (the abort's error is the point). */
async function abort(stub: DurableObjectStub): Promise<void> {
  await crash(stub);
}

/** The bound the docs give for a change on another shard (tick, two countMs, two calls, tick), with room for this 2-core machine. */
const REMOTE_MS = 3000;

/** @returns the presence a client's frames add up to (by connection id): a snapshot replaces, changes patch */
function view(client: RoomClient): Map<string, unknown> {
  const byId = new Map<string, unknown>();
  for (const [publicId, value] of publicView(client)) byId.set(byPublicId.get(publicId) ?? publicId, value);
  return byId;
}

/** @returns the presence a client's frames add up to, by public id, as the frames carry it */
function publicView(client: RoomClient): Map<string, unknown> {
  let entries = new Map<string, unknown>();
  for (const frame of client.frames) {
    if (frame.type !== "dokit_presence") continue;
    if (Array.isArray(frame.all)) entries = new Map(frame.all as [string, unknown][]);
    for (const [id, value] of (frame.set as [string, unknown][] | undefined) ?? []) entries.set(id, value);
    for (const id of (frame.left as string[] | undefined) ?? []) entries.delete(id);
  }
  return entries;
}

const names = (client: RoomClient) => [...view(client).entries()].map(([id, value]) => `${id}=${(value as { name: string }).name}`).sort();

/** Opens `count` clients of a presence room of `shards` shards, client i on shard i % shards (`kind` "tree": through relays). */
async function open(room: string, shards: number, count: number, prefix: string, kind = "1"): Promise<RoomClient[]> {
  const clients: RoomClient[] = [];
  for (let i = 0; i < count; i++) {
    const client = new RoomClient(`${prefix}${i}`, room, { shards: String(shards), presence: kind });
    await client.connect({ shard: i % shards });
    clients.push(client);
  }
  return clients;
}

const present = (client: RoomClient, name: string) => client.send(JSON.stringify({ type: "dokit_presence", value: { name } }));
const watch = (client: RoomClient) => client.send(JSON.stringify({ type: "dokit_presence", watch: true }));

describe("room-wide presence", () => {
  it("shows a watcher on shard 0 the joins, updates and leaves of shards 1 and 2, through the dokit_presence frames", async () => {
    const room = fresh("p-wide");
    const clients = await open(room, 3, 6, "a");
    const [w, , c2, , c4, c5] = clients as [RoomClient, RoomClient, RoomClient, RoomClient, RoomClient, RoomClient];
    watch(w);
    await until(() => w.frames.some((frame) => frame.type === "dokit_presence" && (frame as Frame).you === clients[0]!.publicId), "a0's snapshot");
    for (const client of clients.slice(1)) present(client, `n-${client.id}`);
    const everyone = ["a1=n-a1", "a2=n-a2", "a3=n-a3", "a4=n-a4", "a5=n-a5"];
    await until(() => names(w).join() === everyone.join(), "every join on a0", REMOTE_MS);
    // An update on shard 1 and one on shard 2.
    present(c4, "renamed");
    present(c5, "renamed too");
    await until(() => view(w).get("a4") !== undefined && (view(w).get("a4") as { name: string }).name === "renamed" && (view(w).get("a5") as { name: string }).name === "renamed too", "the updates on a0", REMOTE_MS);
    // A leave (a closed connection) on shard 2, and a cleared value on shard 1.
    await c2.close();
    c4.send(JSON.stringify({ type: "dokit_presence", value: null }));
    await until(() => !view(w).has("a2") && !view(w).has("a4"), "the leaves on a0", REMOTE_MS);
    expect(names(w)).toEqual(["a1=n-a1", "a3=n-a3", "a5=renamed too"]);
    // Every frame was a presence frame of the existing shape: a snapshot, then {set, left} changes.
    for (const frame of w.frames.filter((frame) => frame.type === "dokit_presence")) {
      expect(Object.keys(frame).every((key) => ["type", "you", "all", "set", "left"].includes(key))).toBe(true);
    }
    // A new watcher on shard 1 gets the room in its snapshot (a0 has no value: it only watches).
    const late = new RoomClient("late", room, { shards: "3", presence: "1" });
    await late.connect({ shard: 1 });
    watch(late);
    await until(() => names(late).join() === ["a1=n-a1", "a3=n-a3", "a5=renamed too"].join(), "the room in late's snapshot", REMOTE_MS);
    for (const client of [...clients, late]) await client.close();
  });

  it("removes every entry of a shard whose last connection leaves, on every other shard", async () => {
    const room = fresh("p-last");
    const clients = await open(room, 3, 6, "b");
    const [w0, w1, c2, , , c5] = clients as [RoomClient, RoomClient, RoomClient, RoomClient, RoomClient, RoomClient];
    watch(w0);
    watch(w1);
    present(c2, "two");
    present(c5, "five");
    await until(() => names(w0).join() === "b2=two,b5=five" && names(w1).join() === "b2=two,b5=five", "shard 2's entries on shards 0 and 1", REMOTE_MS);
    await c2.close();
    await c5.close();
    await until(() => view(w0).size === 0 && view(w1).size === 0, "shard 2's entries gone from shards 0 and 1", REMOTE_MS);
    // The sequencer holds none of them any more: a watcher that joins later sees nobody.
    const late = new RoomClient("late", room, { shards: "3", presence: "1" });
    await late.connect({ shard: 0 });
    watch(late);
    await until(() => late.frames.some((frame) => frame.type === "dokit_presence"), "late's snapshot");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(view(late).size).toBe(0);
    for (const client of [...clients, late]) await client.close();
  });

  it("keeps room-wide presence through an evicted shard and a reset sequencer", async () => {
    const room = fresh("p-reset");
    const clients = await open(room, 3, 6, "d");
    const [w, c1, c2, c3, c4, c5] = clients as [RoomClient, RoomClient, RoomClient, RoomClient, RoomClient, RoomClient];
    watch(w);
    for (const client of [c1, c2, c3, c4, c5]) present(client, client.id);
    const all = ["d1=d1", "d2=d2", "d3=d3", "d4=d4", "d5=d5"];
    await until(() => names(w).join() === all.join(), "everyone on d0", REMOTE_MS);

    // The watcher's shard hibernates (its memory of the other shards is gone): a change elsewhere
    // brings the room back to it (a new snapshot), and nobody is lost.
    const snapshots = () => w.frames.filter((frame) => frame.type === "dokit_presence" && Array.isArray(frame.all)).length;
    expect(snapshots()).toBe(1);
    await evictDurableObject(shardStub(room, 0));
    present(c1, "d1 after");
    await until(() => names(w).join() === ["d1=d1 after", "d2=d2", "d3=d3", "d4=d4", "d5=d5"].join(), "the room after shard 0's eviction", REMOTE_MS);
    // The new instance could not know what the old one had told the watcher: it sent a new snapshot.
    expect(snapshots()).toBe(2);

    // Shard 1 hibernates: its entries stay with the others, and its next change still arrives.
    await evictDurableObject(shardStub(room, 1));
    present(c4, "d4 after");
    await until(() => names(w).join() === ["d1=d1 after", "d2=d2", "d3=d3", "d4=d4 after", "d5=d5"].join(), "shard 1's change after its eviction", REMOTE_MS);

    // The sequencer is reset: it lost every set; the shards send theirs again when they hear of it.
    const atReset = w.frames.length;
    await abort(sequencerStub(room));
    present(c2, "d2 after");
    await until(() => names(w).join() === ["d1=d1 after", "d2=d2 after", "d3=d3", "d4=d4 after", "d5=d5"].join(), "the room after the sequencer's reset", REMOTE_MS);
    // Nobody seemed to leave meanwhile: the shards kept what they had until the others sent theirs again.
    const since = w.frames.slice(atReset).filter((frame) => frame.type === "dokit_presence");
    expect(since.flatMap((frame) => (frame.left as string[] | undefined) ?? [])).toEqual([]);
    expect(since.filter((frame) => Array.isArray(frame.all))).toEqual([]);
    // …and a watcher joining now sees the whole room, from the new sequencer instance.
    const late = new RoomClient("late", room, { shards: "3", presence: "1" });
    await late.connect({ shard: 2 });
    watch(late);
    await until(() => names(late).join() === ["d1=d1 after", "d2=d2 after", "d3=d3", "d4=d4 after", "d5=d5"].join(), "the whole room in late's view", REMOTE_MS);
    // A leave after the reset still reaches every shard.
    await c3.close();
    await until(() => !view(w).has("d3") && !view(late).has("d3"), "d3's leave after the reset", REMOTE_MS);
    for (const client of [...clients, late]) await client.close();
  });

  it("spreads presence through the relay tree (one delivery for several shards, from the version the furthest behind had)", async () => {
    const room = fresh("p-tree");
    // 5 shards, 2 wide: the sequencer delivers through relays.
    const clients = await open(room, 5, 10, "t", "tree");
    const [w] = clients as [RoomClient];
    watch(w);
    for (const client of clients.slice(1)) present(client, client.id);
    const everyone = clients.slice(1).map((client) => `${client.id}=${client.id}`).sort();
    await until(() => names(w).join() === everyone.join(), "every shard's entries on t0", REMOTE_MS);
    // A leave on shard 3 and an update on shard 4, then a watcher on shard 2 that joins late.
    await (clients[3] as RoomClient).close();
    present(clients[4] as RoomClient, "moved");
    const after = everyone.filter((entry) => !entry.startsWith("t3=")).map((entry) => (entry.startsWith("t4=") ? "t4=moved" : entry));
    await until(() => names(w).join() === after.join(), "the leave and the update on t0", REMOTE_MS);
    const late = new RoomClient("late", room, { shards: "5", presence: "tree" });
    await late.connect({ shard: 2 });
    watch(late);
    await until(() => names(late).join() === after.join(), "the room in late's view", REMOTE_MS);
    for (const client of [...clients, late]) await client.close();
  });

  it("takes an object named like a shard but not in canonical form (`<room>#01`) for a room of its own: it cannot replace or erase shard 1's presence", async () => {
    const room = fresh("p-fake-shard");
    const [w, real] = (await open(room, 2, 2, "c")) as [RoomClient, RoomClient];
    watch(w);
    present(real, "real");
    await until(() => names(w).join() === "c1=real", "c1's value on c0", REMOTE_MS);
    // Reached by object name, as shards are where they are addressed by name: `#01`, `#+1`, `# 1` all read as 1 to Number().
    const fakes: TestSocket[] = [];
    const welcomes: unknown[] = [];
    for (const [i, suffix] of ["01", "+1", " 1", "1.0"].entries()) {
      const fake = await openSocket(env.ROOM_PRESENCE_CHAT.get(env.ROOM_PRESENCE_CHAT.idFromName(`${room}#${suffix}`)), "http://example.com/", { query: { _pk: `evil${i}` } });
      let welcome: Frame;
      do welcome = await fake.nextJSON<Frame>(5000);
      while (welcome.type !== "dokit_room_welcome");
      welcomes.push({ room: welcome.room, shard: welcome.shard });
      fake.send({ type: "dokit_presence", value: { name: "evil" } });
      fakes.push(fake);
    }
    // Its presence stays in its own room; shard 1's is untouched, also after it leaves.
    await sleep(REMOTE_MS / 2);
    for (const fake of fakes) await fake.close();
    await sleep(REMOTE_MS / 2);
    expect(names(w)).toEqual(["c1=real"]);
    expect(w.frames.filter((frame) => frame.type === "dokit_presence").flatMap((frame) => [...((frame.set as [string][] | undefined) ?? []), ...((frame.all as [string][] | undefined) ?? [])].map(([id]) => id))).not.toContain("evil0");
    expect(welcomes).toEqual(["01", "+1", " 1", "1.0"].map((suffix) => ({ room: `${room}#${suffix}`, shard: 0 })));
    for (const client of [w, real]) await client.close();
  });

  it("caps room-wide presence at presenceEntries: entries past it stay on their own shard", async () => {
    const room = fresh("p-cap");
    const logs = captureConsole();
    const clients = await open(room, 2, 9, "e");
    const [w] = clients as [RoomClient];
    watch(w);
    // Shard 1 holds e1, e3, e5, e7 (4 entries), shard 0 e2, e4, e6, e8 (4): the room keeps 5 (PresenceSequencer).
    for (const client of clients.slice(1)) present(client, client.id);
    await until(() => ["e2", "e4", "e6", "e8"].every((id) => view(w).has(id)) && ["e1", "e3", "e5", "e7"].some((id) => view(w).has(id)), "shard 0's own and some of shard 1's", REMOTE_MS);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const remote = ["e1", "e3", "e5", "e7"].filter((id) => view(w).has(id)).length;
    // Whichever shard reported first took its place: the room never holds more than 5.
    expect(remote).toBeGreaterThanOrEqual(1);
    expect(remote).toBeLessThanOrEqual(4);
    expect(view(w).size).toBeLessThanOrEqual(4 + 5);
    expect(logs.warn).toContain("dokit: a room's presence is over its limits (5 entries, 524288 bytes): entries past them stay on their own shard");
    for (const client of clients) await client.close();
  });
});

describe("room count frames", () => {
  it("tells clients of count changes on other shards, coalesced to at most one frame per shard countMs", async () => {
    const room = fresh("p-count");
    const [first] = await open(room, 3, 1, "f");
    const w = first as RoomClient;
    const start = Date.now();
    const others: RoomClient[] = [];
    for (let i = 1; i <= 12; i++) {
      const client = new RoomClient(`g${i}`, room, { shards: "3", presence: "1" });
      await client.connect({ shard: 1 + (i % 2) });
      others.push(client);
    }
    const counts = () => w.frames.filter((frame) => frame.type === "dokit_room_count").map((frame) => frame.count as number);
    await until(() => counts().at(-1) === 13, "a count frame of 13 on f0", REMOTE_MS);
    const elapsed = Date.now() - start;
    // Twelve joins, and the shard's countMs is 50: at most one frame per 50 ms (and one at the start).
    expect(counts().length).toBeLessThanOrEqual(Math.floor(elapsed / 50) + 1);
    expect(counts().length).toBeLessThan(12);
    // Every frame said something new: the counts move, never repeat.
    for (let i = 1; i < counts().length; i++) expect(counts()[i]).not.toBe(counts()[i - 1]);
    // Leaves on other shards too.
    for (const client of others.slice(0, 5)) await client.close();
    await until(() => counts().at(-1) === 8, "a count frame of 8 on f0", REMOTE_MS);
    for (const client of [w, ...others.slice(5)]) await client.close();
  });
  it("does not send a woken shard's clients the count they have", async () => {
    const room = fresh("p-count-wake");
    const [a, b] = (await open(room, 2, 2, "h")) as [RoomClient, RoomClient];
    const counts = () => a.frames.filter((frame) => frame.type === "dokit_room_count").map((frame) => frame.count as number);
    await until(() => counts().at(-1) === 2, "a count frame of 2 on h0", REMOTE_MS);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = counts().length;
    // Shard 0 hibernates; a publish on shard 1 wakes it with a delivery that carries the same count.
    await evictDurableObject(shardStub(room, 0));
    b.publish(1);
    await until(() => a.messages.length === 1, "the message on h0", REMOTE_MS);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(counts().length).toBe(before);
    // A real change still goes out.
    const c = new RoomClient("h2", room, { shards: "2", presence: "1" });
    await c.connect({ shard: 1 });
    await until(() => counts().at(-1) === 3, "a count frame of 3 on h0", REMOTE_MS);
    for (const client of [a, b, c]) await client.close();
  });
});

describe("a shard's presence set in parts", () => {
  const partsSequencer = (room: string) => env.PARTS_SEQUENCER.get(env.PARTS_SEQUENCER.idFromName(room));
  const partsShard = (room: string, index: number) => env.ROOM_PRESENCE_PARTS.get(env.ROOM_PRESENCE_PARTS.idFromName(`${room}#${index}`));
  /** A value of about 1 KB in UTF-8 whose characters are outside Latin-1 (copied at 2 bytes each between objects). */
  const wide = (name: string) => `${"€".repeat(250)}${name}`;

  it("sends a shard's presence to the sequencer in calls of at most presencePartBytes, applied whole: nothing is lost, and no watcher sees half a set", async () => {
    const room = fresh("p-parts");
    const w = new RoomClient("w", room, { shards: "2", presence: "parts" });
    await w.connect({ shard: 0 });
    watch(w);
    // 12 connections on shard 1, each with a value of about 1 KB (1,100 estimated bytes): 3 fit in a call of 4 KiB.
    const clients: RoomClient[] = [];
    for (let i = 0; i < 12; i++) {
      const client = new RoomClient(`m${i}`, room, { shards: "2", presence: "parts" });
      await client.connect({ shard: 1 });
      clients.push(client);
    }
    for (const client of clients) present(client, wide(client.id));
    const everyone = clients.map((client) => `${client.id}=${wide(client.id)}`).sort();
    await until(() => names(w).join() === everyone.join(), "all 12 values on shard 0", REMOTE_MS);
    const received = () => runInDurableObject(partsSequencer(room), (instance) => instance.received.filter((update) => update.shard === `${room}#1`));
    const before = await received();
    // Every call carried at most 4 KiB of entries (at least one entry); the 12 values needed several.
    for (const update of before) expect(update.bytes <= 4096 || update.ids.length === 1).toBe(true);
    expect(before.some((update) => update.more)).toBe(true);

    // Shard 1 is evicted: its new instance sends its whole set again, in parts, at its next change.
    await evictDurableObject(partsShard(room, 1));
    const atEviction = w.frames.length;
    present(clients[5] as RoomClient, wide("renamed"));
    const after = everyone.map((entry) => (entry.startsWith("m5=") ? `m5=${wide("renamed")}` : entry)).sort();
    await until(() => names(w).join() === after.join(), "m5's new value on shard 0", REMOTE_MS);
    await sleep(200);
    // The parts were applied together: the watcher saw m5's change only, nobody leave, no new snapshot.
    const since = w.frames.slice(atEviction).filter((frame) => frame.type === "dokit_presence");
    expect(since.flatMap((frame) => (frame.left as string[] | undefined) ?? [])).toEqual([]);
    expect(since.filter((frame) => Array.isArray(frame.all))).toEqual([]);
    expect(since.flatMap((frame) => ((frame.set as [string][] | undefined) ?? []).map(([id]) => byPublicId.get(id) ?? id))).toEqual(["m5"]);
    // The whole set went as numbered parts of one stream, each within the bound, every id in them.
    const whole = (await received()).slice(before.length).filter((update) => update.gen !== before[0]?.gen);
    expect(whole[0]?.full).toBe(true);
    expect(whole.length).toBeGreaterThanOrEqual(4);
    whole.forEach((update, i) => {
      expect(update.n).toBe(i + 1);
      expect(update.full).toBe(i === 0);
      expect(update.more).toBe(i < whole.length - 1);
      expect(update.bytes).toBeLessThanOrEqual(4096);
    });
    expect(whole.flatMap((update) => update.ids).map((id: string) => byPublicId.get(id) ?? id).sort()).toEqual(clients.map((client) => client.id).sort());
    for (const client of [w, ...clients]) await client.close();
  });

  it("holds the parts of an update aside until the last one: the room sees the set before it, then the whole new one", async () => {
    const room = fresh("p-parts-held");
    const a = { name: `${room}#0`, binding: "ROOM_PRESENCE_PARTS", connections: 1 };
    const b = { name: `${room}#1`, binding: "ROOM_PRESENCE_PARTS", connections: 1 };
    await runInDurableObject(partsSequencer(room), async (sequencer) => {
      await sequencer.join(a, null);
      await sequencer.join(b, null);
      // The first part of shard 1's first set, held aside: the news does not list shard 1 (it would read as empty).
      await sequencer.presence(b, { gen: "g0", n: 1, full: true, set: [["v", "0"]], left: [], more: true }, null);
      expect((await sequencer.presence(a, null, null)).news.shards).toEqual({});
      expect((await sequencer.presence(b, { gen: "g1", n: 1, full: true, set: [["x", "1"], ["y", "2"]], left: [] }, null)).resync).toBe(false);
      const first = (await sequencer.presence(a, null, null)).news;
      expect(first.shards?.["1"]).toEqual([["x", "1"], ["y", "2"]]);
      const known = { instance: first.instance, version: first.version };
      // A new instance of shard 1 sends its whole set in two parts: shard 0 sees no change after the first…
      expect((await sequencer.presence(b, { gen: "g2", n: 1, full: true, set: [["z", "3"]], left: [], more: true }, null)).resync).toBe(false);
      const mid = (await sequencer.presence(a, null, known)).news;
      expect(mid.version).toBe(first.version);
      expect(mid.shards).toBeUndefined();
      // …and the whole new set after the last.
      expect((await sequencer.presence(b, { gen: "g2", n: 2, full: false, set: [["w", "4"]], left: [] }, null)).resync).toBe(false);
      const last = (await sequencer.presence(a, null, known)).news;
      expect(last.shards?.["1"]).toEqual([["z", "3"], ["w", "4"]]);
      // A part out of order drops what was held aside; the part that would have followed is refused too (the shard sends its whole set).
      const now = { instance: last.instance, version: last.version };
      await sequencer.presence(b, { gen: "g3", n: 1, full: true, set: [["q", "5"]], left: [], more: true }, null);
      expect((await sequencer.presence(b, { gen: "g3", n: 3, full: false, set: [["r", "6"]], left: [] }, null)).resync).toBe(true);
      expect((await sequencer.presence(b, { gen: "g3", n: 2, full: false, set: [["s", "7"]], left: [] }, null)).resync).toBe(true);
      expect((await sequencer.presence(a, null, now)).news.shards).toBeUndefined();
      // Nobody left the shard's set meanwhile.
      expect((await sequencer.presence(a, null, null)).news.shards?.["1"]).toEqual([["z", "3"], ["w", "4"]]);
      await sequencer.leave(a.name);
      await sequencer.leave(b.name);
    });
  });
});
