import { env, exports } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { RateLimit, type RateLimitOptions, WebSockets } from "../../src/websockets";
import { capnweb } from "../../src/capnweb";
import { hibernate, openSocket } from "../../src/testing";
import { fresh } from "../helpers";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: { fetch(input: Request | string, init?: RequestInit): Promise<Response> } })
  .default;
const open = (name: string) => openSocket(worker, `http://example.com/agents/ws-rate-limited/${name}`);

/** @returns the frame parsed, asserting it is the rate limit's error frame */
function rateLimited(message: string | ArrayBuffer): { retryAfterMs: number } {
  const frame = JSON.parse(String(message)) as { type: string; code: string; error: string; retryAfterMs: number };
  expect(frame).toMatchObject({ type: "dokit_error", code: "RATE_LIMITED", error: "Too many messages" });
  return frame;
}

/** Spends the test class's burst of three messages, each echoed. */
async function spendBurst(socket: Awaited<ReturnType<typeof open>>): Promise<void> {
  for (const n of [1, 2, 3]) socket.send(`m${n}`);
  for (const n of [1, 2, 3]) expect(await socket.next()).toBe(`echo:m${n}`);
}

describe("rate limit", () => {
  it("drops a burst's excess with an error frame, then closes with 4429; another connection is unaffected", async () => {
    const name = fresh("rl-burst");
    const noisy = await open(name);
    const quiet = await open(name);
    await spendBurst(noisy);

    noisy.send("m4");
    const frame = rateLimited(await noisy.next());
    expect(frame.retryAfterMs).toBeGreaterThan(0);
    expect(frame.retryAfterMs).toBeLessThanOrEqual(1000);
    noisy.send("m5");
    rateLimited(await noisy.next());
    noisy.send("m6");
    const closed = await noisy.closed;
    expect(closed.code).toBe(4429);
    expect(closed.reason).toBe("dokit: too many messages");
    // The dropped messages reached no handler: nothing was echoed.
    expect(await noisy.drain()).toEqual([]);

    quiet.send("hello");
    expect(await quiet.next()).toBe("echo:hello");
    await quiet.close();
  });

  it("counts bytes: a message over burstBytes is dropped with retryAfterMs -1, smaller ones pass", async () => {
    const socket = await open(fresh("rl-bytes"));
    socket.send("x".repeat(65));
    expect(rateLimited(await socket.next()).retryAfterMs).toBe(-1);
    // An admitted message resets the drops in a row.
    socket.send("small");
    expect(await socket.next()).toBe("echo:small");
    await socket.close();
  });

  it("keeps the bucket across an eviction: a wake gives no fresh allowance", async () => {
    const name = fresh("rl-evict");
    const stub = env.WS_RATE_LIMITED.getByName(name);
    const socket = await open(name);
    await spendBurst(socket);
    socket.send("m4");
    rateLimited(await socket.next());

    await hibernate(stub);
    // A fresh bucket would admit three messages; the stored one is still empty.
    socket.send("m5");
    rateLimited(await socket.next());
    socket.send("m6");
    expect((await socket.closed).code).toBe(4429);
  });

  it("keeps lazy wake: a message after an eviction is counted (and closes with 4429) without wiring the object", async () => {
    // The class's first object is wired as it is built; it shows that later ones may wait.
    const first = await open(fresh("rl-lazy-first"));
    first.send("m1");
    expect(await first.next()).toBe("echo:m1");
    await first.close();

    const name = fresh("rl-lazy");
    const stub = env.WS_RATE_LIMITED.getByName(name);
    const socket = await open(name);
    await spendBurst(socket);
    socket.send("m4");
    rateLimited(await socket.next());
    expect((await stub.report()).attached).toBe(1); // the upgrade wired it

    await hibernate(stub);
    // The stored bucket is still empty: dropped, and the object built on the wake attached nothing.
    socket.send("m5");
    rateLimited(await socket.next());
    expect((await stub.report()).attached).toBe(0);
    socket.send("m6");
    expect((await socket.closed).code).toBe(4429);
    expect(await socket.drain()).toEqual([]);
    expect((await stub.report()).attached).toBe(0);
  });

  it("a wake restores the allowance stored at most a second earlier (the documented tolerance)", async () => {
    const name = fresh("rl-tolerance");
    const stub = env.WS_RATE_LIMITED.getByName(name);
    const socket = await open(name);
    // The first message stores the bucket (2 left); the next two within the second are not stored.
    await spendBurst(socket);
    await hibernate(stub);
    // At most what was used since the last store comes back: two messages, not three.
    for (const n of [4, 5, 6]) socket.send(`m${n}`);
    expect(await socket.next()).toBe("echo:m4");
    expect(await socket.next()).toBe("echo:m5");
    rateLimited(await socket.next());
    await socket.close();
  });

  it("reads and writes the bucket where the attachment always kept it (the flag `rate`), in both stored forms", async () => {
    const name = fresh("rl-layout");
    const stub = env.WS_RATE_LIMITED.getByName(name);
    const compact = await open(name);
    const whole = await open(name);
    // An admitted first message stores the bucket: under `rate` among the flags, as before the door.
    compact.send("m1");
    expect(await compact.next()).toBe("echo:m1");
    const written = await runInDurableObject(stub, (_instance, ctx) => ctx.getWebSockets().map((ws) => ws.deserializeAttachment() as unknown));
    const stored = written.find((value) => typeof value === "string" && value.includes('"rate":['));
    expect(stored).toMatch(/^\u0000dokit\u0000\{/);
    expect(JSON.parse(String(stored).slice(7)).rate).toEqual([2, expect.any(Number), expect.any(Number), 0]);

    // Attachments as a deploy before the door wrote them: the bucket empty, two drops in a row (closeAfter is 3).
    const bucket = [0, 64, Date.now(), 2];
    await runInDurableObject(stub, (_instance, ctx) => {
      for (const ws of ctx.getWebSockets()) {
        const value = ws.deserializeAttachment() as unknown;
        const flags = typeof value === "string" ? (JSON.parse(value.slice(7)) as Record<string, unknown>) : (value as { __dokit: Record<string, unknown> }).__dokit;
        flags.rate = bucket;
        // One in the string form (no user state), one in the object form (user state beside the flags).
        ws.serializeAttachment(flags.id === stored?.toString().match(/"id":"([^"]+)"/)?.[1] ? `\u0000dokit\u0000${JSON.stringify(flags)}` : { __dokit: flags, user: { n: 1 } });
      }
    });
    await hibernate(stub);
    // A fresh bucket would admit these; the stored ones are empty with two drops: the third closes.
    compact.send("m2");
    whole.send("m2");
    expect((await compact.closed).code).toBe(4429);
    expect((await whole.closed).code).toBe(4429);
    expect(await compact.drain()).toEqual([]);
    expect(await whole.drain()).toEqual([]);
  });

  it("refuses invalid options with INVALID_ARGUMENT", () => {
    const invalid: RateLimitOptions[] = [{}, { messagesPerSecond: 0 }, { messagesPerSecond: Number.NaN }, { bytesPerSecond: -1 }, { messagesPerSecond: 5, burst: 0.5 }, { messagesPerSecond: 5, closeAfter: 0 }, { bytesPerSecond: 100, burst: 5 }, { messagesPerSecond: 5, burstBytes: 100 }];
    for (const options of invalid) {
      expect(() => new RateLimit(options), JSON.stringify(options)).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    }
    expect(() => new WebSockets({ rateLimit: new RateLimit({ messagesPerSecond: 5 }) })).not.toThrow();
  });

  it("is a plug-in of the door, as are the heartbeat and Cap'n Web: the options only register them", () => {
    const rateLimit = new RateLimit({ messagesPerSecond: 5 });
    const sockets = new WebSockets({ rateLimit, heartbeat: true, capnweb });
    expect(sockets.plugin("rateLimit")).toBe(rateLimit);
    expect(sockets.plugin("capnweb")).toBe(capnweb);
    expect(sockets.plugin("heartbeat")?.accepted).toBeTypeOf("function");
    expect(new WebSockets({ rateLimit }).plugin("heartbeat")).toBeUndefined();
  });
});
