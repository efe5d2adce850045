// expectHibernates (dokit/testing) in the workers pool: it passes for an object that
// holds nothing open, and fails for one that keeps a stream or a timer running.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { expectHibernates } from "../../src/testing";

describe("expectHibernates", () => {
  it("passes for an object that holds nothing open: the next event meets a fresh instance", async () => {
    const stub = env.SLEEPER.getByName("sleeper");
    const first = await stub.ping();
    const { result, waitedMs } = await expectHibernates(stub, { next: () => stub.ping() });
    expect(result).not.toBe(first);
    expect(waitedMs).toBeGreaterThanOrEqual(13_000);
  }, 30_000);

  it("fails for an object that keeps a stream open, naming it: after the idle period, and when the same instance answers", async () => {
    const stub = env.STREAMER.getByName("streamer");
    const first = await stub.ping();
    await expect(expectHibernates(stub, { next: () => stub.ping(), idleMs: 500 })).rejects.toThrow(
      "the object is still kept awake 500 ms after its last event: a stream from Source is open",
    );
    await expect(expectHibernates(stub, { next: () => stub.ping() })).rejects.toThrow(
      /the object did not hibernate: the same instance answered the next event \d+ ms after it was left idle \(what keeps it awake: a stream from Source is open\)/,
    );
    expect(await stub.ping()).toBe(first);
  }, 30_000);

  it("fails for an object whose interval timer keeps it in memory", async () => {
    const stub = env.TICKER.getByName("ticker");
    const first = await stub.ping();
    await expect(expectHibernates(stub, { next: () => stub.ping() })).rejects.toThrow(
      /the object did not hibernate: the same instance answered the next event \d+ ms after it was left idle \(dokit knows of nothing open/,
    );
    expect(await stub.ping()).toBe(first);
  }, 30_000);
});
