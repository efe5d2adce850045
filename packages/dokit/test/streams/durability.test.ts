import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fresh, sleep } from "../helpers";

/** A small deterministic generator, so a failing run can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe("Streams: durability under ctx.abort()", () => {
  it("keeps every append that returned, in order, and a reconnecting reader reads each chunk exactly once", async () => {
    const seed = Date.now();
    const rand = random(seed);
    const name = fresh("durable");
    const stream = "log";
    /** The cursor each acknowledged value was given. */
    const acknowledged = new Map<string, number>();
    /** What the reader has read, across reconnects. */
    const readerSaw: { seq: number; chunk: unknown }[] = [];
    let readerNext = 0;
    let sent = 0;
    const rounds = 40;
    for (let round = 0; round < rounds; round++) {
      const stub = env.REPORT.getByName(name);
      // A burst of appends in flight, and an abort at a random moment among them.
      const burst = 1 + Math.floor(rand() * 12);
      const appends = Array.from({ length: burst }, () => {
        const value = `v${sent++}`;
        return stub.appendOne(stream, value).then((seq) => acknowledged.set(value, seq));
      });
      await sleep(Math.floor(rand() * 4));
      const killed = env.REPORT.getByName(name).kill().catch(() => undefined);
      await Promise.allSettled([...appends, killed]);
      // The reader reconnects (a new instance after the abort) and reads from its cursor.
      const got = await env.REPORT.getByName(name).readAll(stream, readerNext);
      readerSaw.push(...got);
      readerNext += got.length;
    }
    const stored = await env.REPORT.getByName(name).readAll(stream, 0);
    const context = `seed ${seed}`;
    // The log is dense and in cursor order, with no value twice.
    expect(stored.map((c) => c.seq), context).toEqual(stored.map((_, i) => i));
    expect(new Set(stored.map((c) => c.chunk)).size, context).toBe(stored.length);
    // Every append that returned is there, at the cursor it was given.
    for (const [value, seq] of acknowledged) expect(stored[seq]?.chunk, `${context}: ${value}`).toBe(value);
    // Values appear in the order they were sent (one writer per instance appends in call order).
    const order = stored.map((c) => Number(String(c.chunk).slice(1)));
    expect(order, context).toEqual([...order].sort((a, b) => a - b));
    // The reader read every chunk exactly once: no duplicate, no gap, no reorder.
    expect(readerSaw, context).toEqual(stored);
    // The run exercised both outcomes: some appends acknowledged, some lost to an abort.
    expect(acknowledged.size, context).toBeGreaterThan(0);
    expect(sent, context).toBeGreaterThan(acknowledged.size);
  }, 60_000);
});
