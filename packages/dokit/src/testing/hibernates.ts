// A check that an object really hibernates: left idle, the runtime evicts it, and the
// next event meets a fresh instance. For tests in the workers vitest pool (it uses
// `runInDurableObject` from `cloudflare:test`, as `hibernate()` uses `evictDurableObject`).
import { runInDurableObject } from "cloudflare:test";

/** The property the check marks an instance with (a fresh instance does not have it). */
const MARK = Symbol.for("dokit.testing.instance");

/** Options of {@link expectHibernates}. */
export interface HibernationOptions<T> {
  /** Sends the object its next event (a request, an RPC call, a WebSocket message) after the wait. @returns its answer */
  next: () => Promise<T>;
  /** How long the object's own idle periods last (e.g. McpClients' `streamIdleMs`) before it may sleep (default 0). */
  idleMs?: number;
  /** How long the runtime waits before it evicts an idle object (default 10 000, workerd's). */
  evictionMs?: number;
  /** Added to the wait for a loaded machine (default 3 000). */
  slackMs?: number;
}

/** What {@link expectHibernates} returns once the object hibernated. */
export interface HibernationResult<T> {
  /** What `next()` answered (from the fresh instance). */
  result: T;
  /** Milliseconds the check waited. */
  waitedMs: number;
}

/** What keeps an object awake, as dokit knows it: every field of the object with a `keepsAwake()` method (McpClients has one). */
function knownReasons(instance: object): string[] {
  const reasons: string[] = [];
  for (const value of Object.values(instance)) {
    const report = (value as { keepsAwake?: unknown } | null)?.keepsAwake;
    if (typeof report === "function") reasons.push(...(report.call(value) as string[]));
  }
  return reasons;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Proves that the object behind `stub` hibernates: its instance is marked, the object is
 * left alone for `idleMs` (then nothing dokit knows of may keep it awake) and for the
 * runtime's idle eviction, and the next event must be answered by a fresh instance.
 * Send no other event to the object meanwhile (each one restarts its idle time).
 *
 * ```ts
 * import { expectHibernates } from "dokit/testing";
 * const { result } = await expectHibernates(stub, { next: () => stub.ping() });
 * ```
 * @param stub - the object's stub (an object of the test's `main` worker)
 * @param options - the next event, and how long idle periods and eviction take
 * @returns the next event's answer, from the fresh instance
 * @throws when dokit knows of something open after `idleMs` (listed), or when the same instance answered
 */
export async function expectHibernates<T>(stub: DurableObjectStub, options: HibernationOptions<T>): Promise<HibernationResult<T>> {
  const idleMs = options.idleMs ?? 0;
  const evictionMs = options.evictionMs ?? 10_000;
  const slackMs = options.slackMs ?? 3_000;
  const token = crypto.randomUUID();
  const started = Date.now();
  await runInDurableObject(stub, (instance: object) => {
    (instance as Record<symbol, unknown>)[MARK] = token;
  });
  if (idleMs > 0) {
    await sleep(idleMs);
    const open = await runInDurableObject(stub, (instance: object) => knownReasons(instance));
    if (open.length) throw new Error(`the object is still kept awake ${idleMs} ms after its last event: ${open.join("; ")}`);
  }
  await sleep(evictionMs + slackMs);
  const result = await options.next();
  const same = await runInDurableObject(stub, (instance: object) => ({
    same: (instance as Record<symbol, unknown>)[MARK] === token,
    reasons: knownReasons(instance),
  }));
  if (same.same) {
    const why = same.reasons.length
      ? `what keeps it awake: ${same.reasons.join("; ")}`
      : "dokit knows of nothing open: look for a pending setTimeout or setInterval, an unfinished fetch or stream, a WebSocket accepted with ws.accept() instead of ctx.acceptWebSocket(), or work in ctx.waitUntil";
    throw new Error(`the object did not hibernate: the same instance answered the next event ${Date.now() - started} ms after it was left idle (${why})`);
  }
  return { result, waitedMs: Date.now() - started };
}
