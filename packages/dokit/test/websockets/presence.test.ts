import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Presence } from "../../src/presence";
import { expectHibernates, hibernate, openSocket, type TestSocket } from "../../src/testing";
import { publicIdOf as pub } from "../public-id";
import { fresh } from "../helpers";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: { fetch(input: Request | string, init?: RequestInit): Promise<Response> } })
  .default;
/** Opens a connection and reads its identity frame, so the next frame is presence's. */
async function open(name: string, query: Record<string, string> = {}): Promise<TestSocket> {
  const socket = await openSocket(worker, `http://example.com/agents/ws-presence/${name}`, { query });
  expect(await socket.nextJSON()).toMatchObject({ type: "cf_agent_identity" });
  return socket;
}
const presence = (socket: TestSocket, frame: object) => socket.send({ type: "dokit_presence", ...frame });
/** Longer than a 50 ms tick on a loaded machine: whatever a tick sends has arrived. */
const AFTER_TICK = 300;
const parsed = (messages: (string | ArrayBuffer)[]) => messages.map((message) => JSON.parse(String(message)) as Record<string, unknown>);

describe("presence", () => {
  it("sends a watcher a snapshot, then joins, updates and leaves of the others, one frame per tick", async () => {
    const name = fresh("pr-basic");
    const a = await open(name, { _pk: "a" });
    const b = await open(name, { _pk: "b" });
    presence(a, { watch: true });
    expect(await a.nextJSON()).toEqual({ type: "dokit_presence", you: pub("a"), all: [] });
    // b publishes (and so watches): its snapshot holds itself; a hears of the join at the tick.
    presence(b, { value: { name: "B", x: 1 } });
    expect(await b.nextJSON()).toEqual({ type: "dokit_presence", you: pub("b"), all: [[pub("b"), { name: "B", x: 1 }]] });
    expect(parsed(await a.drain(AFTER_TICK))).toEqual([{ type: "dokit_presence", set: [[pub("b"), { name: "B", x: 1 }]] }]);
    expect(parsed(await b.drain(0))).toEqual([{ type: "dokit_presence", set: [[pub("b"), { name: "B", x: 1 }]] }]);
    // Twenty updates in one tick: one frame, the latest value.
    for (let x = 2; x <= 21; x++) presence(b, { value: { name: "B", x } });
    expect(parsed(await a.drain(AFTER_TICK))).toEqual([{ type: "dokit_presence", set: [[pub("b"), { name: "B", x: 21 }]] }]);
    // A close is a leave.
    await b.close();
    expect(parsed(await a.drain(AFTER_TICK))).toEqual([{ type: "dokit_presence", left: [pub("b")] }]);
    await a.close();
  });

  it("carries every connection's change of one tick in a single frame, and a value of null leaves", async () => {
    const name = fresh("pr-many");
    const watcher = await open(name, { _pk: "w" });
    presence(watcher, { watch: true });
    await watcher.nextJSON();
    const others = await Promise.all(["p1", "p2", "p3"].map((id) => open(name, { _pk: id })));
    for (const [i, socket] of others.entries()) presence(socket, { value: { name: `P${i}` }, watch: false });
    expect(parsed(await watcher.drain(AFTER_TICK))).toEqual([
      { type: "dokit_presence", set: [[pub("p1"), { name: "P0" }], [pub("p2"), { name: "P1" }], [pub("p3"), { name: "P2" }]] },
    ]);
    // watch: false: publishers that do not watch received nothing at all.
    for (const socket of others) expect(await socket.drain(0)).toEqual([]);
    presence(others[0] as TestSocket, { value: null });
    presence(others[1] as TestSocket, { value: { name: "P1b" } });
    expect(parsed(await watcher.drain(AFTER_TICK))).toEqual([{ type: "dokit_presence", set: [[pub("p2"), { name: "P1b" }]], left: [pub("p1")] }]);
    // Later frames without `watch` keep it off.
    for (const socket of others) expect(await socket.drain(0)).toEqual([]);
    watcher.send("count");
    expect(await watcher.next()).toBe("2");
    for (const socket of [watcher, ...others]) await socket.close();
  });

  it("refuses a value too large, without a name or with a bad watch flag, keeps the previous value and tells only the sender", async () => {
    const name = fresh("pr-refuse");
    const a = await open(name, { _pk: "a" });
    const b = await open(name, { _pk: "b" });
    presence(b, { watch: true });
    await b.nextJSON();
    presence(a, { value: { name: "A" }, watch: false });
    await b.drain(AFTER_TICK);
    presence(a, { value: { name: "A", pad: "x".repeat(300) } });
    expect(await a.nextJSON()).toEqual({ type: "dokit_error", code: "PRESENCE_REJECTED", error: "Presence value over 256 bytes" });
    presence(a, { value: { x: 1 } });
    expect(await a.nextJSON()).toEqual({ type: "dokit_error", code: "PRESENCE_REJECTED", error: "Presence value rejected" });
    presence(a, { watch: "yes" });
    expect(await a.nextJSON()).toEqual({ type: "dokit_error", code: "PRESENCE_REJECTED", error: "watch must be true or false" });
    // Nothing reached the watcher, and the value is the previous one.
    expect(await b.drain(AFTER_TICK)).toEqual([]);
    b.send("get:a");
    expect(JSON.parse(String(await b.next()))).toEqual({ name: "A" });
    // The object and the other connection still work.
    b.send("hello");
    expect(await b.next()).toBe("echo:hello");
    await a.close();
    await b.close();
  });

  it("lets a readonly connection be present, and leaves viewers visibleTo refuses without presence", async () => {
    const name = fresh("pr-readonly");
    const reader = await open(name, { _pk: "r", readonly: "1" });
    const hidden = await open(name, { _pk: "h", tag: "hidden" });
    const viewer = await open(name, { _pk: "v" });
    presence(hidden, { value: { name: "H" } });
    await viewer.drain(AFTER_TICK);
    presence(viewer, { watch: true });
    expect(await viewer.nextJSON()).toEqual({ type: "dokit_presence", you: pub("v"), all: [[pub("h"), { name: "H" }]] });
    presence(reader, { value: { name: "R" } });
    expect(await reader.nextJSON()).toMatchObject({ type: "dokit_presence", you: pub("r") });
    const ticks = parsed(await viewer.drain(AFTER_TICK));
    expect(ticks).toEqual([{ type: "dokit_presence", set: [[pub("r"), { name: "R" }]] }]);
    // The hidden connection is present, yet receives no presence: no snapshot, no tick.
    expect(await hidden.drain(0)).toEqual([]);
    for (const socket of [reader, hidden, viewer]) await socket.close();
  });

  it("keeps values across a hibernation: a later watcher's snapshot has them, and a close after the wake is a leave", async () => {
    const name = fresh("pr-wake");
    const a = await open(name, { _pk: "a" });
    presence(a, { value: { name: "A", x: 7 }, watch: false });
    await a.drain(AFTER_TICK);
    a.send("constructed");
    const before = Number(await a.next());
    await hibernate(env.WS_PRESENCE.getByName(name));
    const b = await open(name, { _pk: "b" });
    presence(b, { watch: true });
    expect(await b.nextJSON()).toEqual({ type: "dokit_presence", you: pub("b"), all: [[pub("a"), { name: "A", x: 7 }]] });
    b.send("constructed");
    expect(Number(await b.next())).toBeGreaterThan(before);
    await a.close();
    expect(parsed(await b.drain(AFTER_TICK))).toEqual([{ type: "dokit_presence", left: [pub("a")] }]);
    await b.close();
  });

  it("keeps the value of a connection that replaced an older one with its id, whatever the order of the old close", async () => {
    const name = fresh("pr-replace");
    const watcher = await open(name, { _pk: "w" });
    presence(watcher, { watch: true });
    await watcher.nextJSON();
    const old = await open(name, { _pk: "same" });
    presence(old, { value: { name: "Old" }, watch: false });
    expect(parsed(await watcher.drain(AFTER_TICK))).toEqual([{ type: "dokit_presence", set: [[pub("same"), { name: "Old" }]] }]);
    // The new socket replaces the old one (4009) and publishes in the same tick as the old one's close.
    const replacement = await open(name, { _pk: "same" });
    presence(replacement, { value: { name: "New" }, watch: false });
    expect((await old.closed).code).toBe(4009);
    expect(parsed(await watcher.drain(AFTER_TICK))).toEqual([{ type: "dokit_presence", set: [[pub("same"), { name: "New" }]] }]);
    watcher.send("list");
    expect(JSON.parse(String(await watcher.next()))).toEqual([{ id: "same", publicId: pub("same"), value: { name: "New" } }]);
    await replacement.close();
    await watcher.close();
  });

  it("tells nobody of a connection that joined and left within one tick", async () => {
    const name = fresh("pr-blink");
    const watcher = await open(name, { _pk: "w" });
    presence(watcher, { watch: true });
    await watcher.nextJSON();
    const blink = await open(name, { _pk: "blink" });
    presence(blink, { value: { name: "X" }, watch: false });
    presence(blink, { value: null });
    expect(await watcher.drain(AFTER_TICK)).toEqual([]);
    await blink.close();
    expect(await watcher.drain(AFTER_TICK)).toEqual([]);
    await watcher.close();
  });

  it("sends presence only to connections that asked: a connection that never sent a presence frame gets none", async () => {
    const name = fresh("pr-quiet");
    const quiet = await open(name, { _pk: "q" });
    const a = await open(name, { _pk: "a" });
    presence(a, { value: { name: "A" } });
    await a.drain(AFTER_TICK);
    await a.close();
    expect(await quiet.drain(AFTER_TICK)).toEqual([]);
    quiet.send("list");
    expect(JSON.parse(String(await quiet.next()))).toEqual([]);
    await quiet.close();
  });

  it("sets, reads and clears values from the server, validated like a client's", async () => {
    const name = fresh("pr-server");
    const a = await open(name, { _pk: "a" });
    const watcher = await open(name, { _pk: "w" });
    presence(watcher, { watch: true });
    await watcher.nextJSON();
    a.send(`set:${JSON.stringify({ name: "Server-set" })}`);
    expect(await a.next()).toBe("set");
    // Held for the tick, yet already read back.
    a.send("list");
    expect(JSON.parse(String(await a.next()))).toEqual([{ id: "a", publicId: pub("a"), value: { name: "Server-set" } }]);
    expect(parsed(await watcher.drain(AFTER_TICK))).toEqual([{ type: "dokit_presence", set: [[pub("a"), { name: "Server-set" }]] }]);
    a.send(`set:${JSON.stringify({ nope: 1 })}`);
    expect(await a.next()).toBe("refused:PRESENCE_REJECTED:dokit: Presence value rejected (connection a)");
    a.send("clear");
    expect(parsed(await watcher.drain(AFTER_TICK))).toEqual([{ type: "dokit_presence", left: [pub("a")] }]);
    a.send("count");
    expect(await a.next()).toBe("0");
    await a.close();
    await watcher.close();
  });

  it("refuses a bound or a tick out of range", () => {
    for (const maxBytes of [0, 8193, Number.NaN]) {
      expect(() => new Presence({ maxBytes })).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    }
    for (const tickMs of [15, 1001]) {
      expect(() => new Presence({ tickMs })).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT", message: `dokit: Presence: tickMs must be 16 to 1000 (got ${tickMs})` }));
    }
    expect(new Presence().tickMs).toBe(50);
    expect(new Presence().maxBytes).toBe(1024);
  });

  it("lets the object hibernate once its tick has gone out", async () => {
    const name = fresh("pr-hibernates");
    const a = await open(name, { _pk: "a" });
    presence(a, { value: { name: "A" } });
    await a.drain(AFTER_TICK);
    const stub = env.WS_PRESENCE.getByName(name);
    const { result } = await expectHibernates(stub, {
      next: async () => {
        a.send("list");
        return JSON.parse(String(await a.next())) as unknown;
      },
    });
    expect(result).toEqual([{ id: "a", publicId: pub("a"), value: { name: "A" } }]);
    await a.close();
  }, 30_000);
});
