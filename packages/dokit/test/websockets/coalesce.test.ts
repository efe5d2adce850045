import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { expectHibernates, hibernate, openSocket, type TestSocket } from "../../src/testing";
import { coalesceBroadcasts, WebSockets } from "../../src/websockets";
import { fresh } from "../helpers";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: { fetch(input: Request | string, init?: RequestInit): Promise<Response> } })
  .default;
const open = (name: string, query: Record<string, string> = {}) =>
  openSocket(worker, `http://example.com/agents/ws-coalesce/${name}`, { query });
const burst = (socket: TestSocket, ...bursts: object[]) => socket.send(JSON.stringify(bursts));
/** Longer than a 50 ms tick on a loaded machine: whatever a tick sends has arrived. */
const AFTER_TICK = 300;

describe("coalesced broadcasts", () => {
  it("sends 100 broadcasts with one key in one tick as one message, the last, to each connection", async () => {
    const name = fresh("co-one");
    const a = await open(name, { _pk: "a" });
    const b = await open(name, { _pk: "b" });
    burst(a, { key: "cursor", count: 100 });
    expect(await a.drain(AFTER_TICK)).toEqual([JSON.stringify({ key: "cursor", seq: 99 })]);
    expect(await b.drain(0)).toEqual([JSON.stringify({ key: "cursor", seq: 99 })]);
    await a.close();
    await b.close();
  });

  it("sends one message per key, in the order the keys first became pending", async () => {
    const name = fresh("co-two");
    const a = await open(name);
    burst(a, { key: "typing", count: 3 }, { key: "cursor", count: 5 }, { key: "typing", count: 2 });
    expect(await a.drain(AFTER_TICK)).toEqual([
      JSON.stringify({ key: "typing", seq: 1 }),
      JSON.stringify({ key: "cursor", seq: 4 }),
    ]);
    await a.close();
  });

  it("applies the except and tag of the winning call, not of the earlier ones", async () => {
    const name = fresh("co-opts");
    const a = await open(name, { _pk: "a", tag: "red" });
    const b = await open(name, { _pk: "b", tag: "blue" });
    const c = await open(name, { _pk: "c", tag: "red" });
    // Earlier calls leave out a; the last one leaves out c.
    burst(a, { key: "k", count: 10, except: "c", first: { except: "a" } });
    expect(await a.drain(AFTER_TICK)).toEqual([JSON.stringify({ key: "k", seq: 9 })]);
    expect(await b.drain(0)).toEqual([JSON.stringify({ key: "k", seq: 9 })]);
    expect(await c.drain(0)).toEqual([]);
    // Earlier calls go to every tag; the last one only to "red".
    burst(a, { key: "k", count: 10, tag: "red", first: {} });
    expect(await a.drain(AFTER_TICK)).toEqual([JSON.stringify({ key: "k", seq: 9 })]);
    expect(await b.drain(0)).toEqual([]);
    expect(await c.drain(0)).toEqual([JSON.stringify({ key: "k", seq: 9 })]);
    for (const socket of [a, b, c]) await socket.close();
  });

  it("starts a new tick with the first call after a tick fired, and a key with nothing new sends nothing", async () => {
    const name = fresh("co-next");
    const a = await open(name);
    burst(a, { key: "p", count: 4 }, { key: "q", count: 1 });
    expect(await a.drain(AFTER_TICK)).toEqual([JSON.stringify({ key: "p", seq: 3 }), JSON.stringify({ key: "q", seq: 0 })]);
    // The tick is over: nothing more comes for p or q without a new call.
    expect(await a.drain(AFTER_TICK)).toEqual([]);
    burst(a, { key: "p", count: 2 });
    expect(await a.drain(AFTER_TICK)).toEqual([JSON.stringify({ key: "p", seq: 1 })]);
    await a.close();
  });

  it("refuses a tick outside 16 to 1000 ms, a coalesced broadcast without coalescing, and one before install", () => {
    for (const tickMs of [15, 1001, Number.NaN, "50"]) {
      // SAFETY: a caller without types passes any value.
      expect(() => coalesceBroadcasts({ tickMs: tickMs as number })).toThrow(
        expect.objectContaining({ code: "INVALID_ARGUMENT", message: `dokit: coalesceBroadcasts: tickMs must be 16 to 1000 ms (got ${String(tickMs)})` }),
      );
    }
    expect(() => coalesceBroadcasts({ tickMs: 16 })).not.toThrow();
    expect(() => coalesceBroadcasts({ tickMs: 1000 })).not.toThrow();
    // Without the option: the caller is told how to turn it on.
    expect(() => new WebSockets().broadcast("x", { coalesce: "k" })).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT", message: "dokit: coalesce needs the coalescing option: coalesceBroadcasts()" }),
    );
    // Not installed: the caller hears it at once, not from a timer.
    expect(() => new WebSockets({ coalescing: coalesceBroadcasts() }).broadcast("x", { coalesce: "k" })).toThrow(expect.objectContaining({ code: "NOT_INSTALLED" }));
  });

  it("keeps the object awake no longer than the tick: it hibernates after the tick and a fresh instance answers", async () => {
    const name = fresh("co-sleep");
    const stub = env.WS_COALESCE.getByName(name);
    const a = await open(name);
    burst(a, { key: "k", count: 20 });
    expect(await a.next()).toBe(JSON.stringify({ key: "k", seq: 19 }));
    a.send("constructed");
    const before = Number(await a.next());
    // Left idle after the tick, the runtime evicts it by itself (no timer is left pending).
    const { result } = await expectHibernates(stub, {
      next: async () => {
        a.send("constructed");
        return Number(await a.next());
      },
    });
    expect(result).toBe(before + 1);
    // The woken object coalesces again, on a timer of its own.
    await hibernate(stub);
    burst(a, { key: "k", count: 3 });
    expect(await a.drain(AFTER_TICK)).toEqual([JSON.stringify({ key: "k", seq: 2 })]);
    await a.close();
  }, 30_000);
});
