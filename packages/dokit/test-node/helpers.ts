// Helpers the Node-side tests share: the runtime-neutral ones of ../test/helpers.ts, and the
// ways a test reaches the worker wrangler started for this project (global-setup.ts).
import { afterEach, expect, inject, onTestFinished, vi } from "vitest";

import { sleep } from "../test/helpers";

export { fresh, sleep, textOf, until } from "../test/helpers";

/**
 * Retries `assertion` until it passes (vi.waitFor).
 * @param options - how long to keep trying and how often, in milliseconds
 * @returns once `assertion` passed; rejects with its last failure after `timeout`
 */
export const eventually = (assertion: () => Promise<void> | void, { timeout = 5000, interval = 10 } = {}) =>
  vi.waitFor(assertion, { timeout, interval });

/**
 * Evicts an object of the loopback worker the way hibernation does (evict.route.ts), and checks
 * the worker said so.
 * @param route - the evict route's first path segment, which picks the namespace
 * @param base - the worker's URL; the project's worker unless given
 */
export async function evict(name: string, route = "evict", base: string | URL = inject("workerUrl")): Promise<void> {
  const response = await fetch(new URL(`/${route}/${name}`, base), { method: "POST" });
  expect(await response.text()).toBe("evicted");
}

/** A Node WebSocket with a queue of the text frames it received; see {@link frameSocket}. */
export type FrameSocket = ReturnType<typeof frameSocket>;

/**
 * Opens Node's WebSocket to `path` on the project's worker and queues its text frames; the
 * socket is closed when the test finishes.
 * @param timeoutMs - how long `next()` waits: a frame that never comes is the failure
 */
export function frameSocket(path: string, timeoutMs: number) {
  const url = new URL(path, inject("workerUrl"));
  url.protocol = "ws:";
  const ws = new WebSocket(url.href);
  const queue: string[] = [];
  const waiting: Array<(frame: string) => void> = [];
  ws.addEventListener("message", (event) => {
    const frame = String(event.data);
    const take = waiting.shift();
    if (take) take(frame);
    else queue.push(frame);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason })),
  );
  const opened = new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => resolve());
    ws.addEventListener("error", reject);
  });
  opened.catch(() => {}); // a caller that does not await the open sees the failure in `next()`
  onTestFinished(() => void (ws.readyState < 2 && ws.close()));
  return {
    ws,
    /** Settles once the socket is open; rejects when it fails to open. */
    opened,
    /** Settles with the close the client saw. */
    closed,
    /** @returns the next text frame; rejects after `timeoutMs` */
    next(): Promise<string> {
      const queued = queue.shift();
      if (queued !== undefined) return Promise.resolve(queued);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no frame within ${timeoutMs / 1000} s`)), timeoutMs);
        waiting.push((frame) => {
          clearTimeout(timer);
          resolve(frame);
        });
      });
    },
  };
}

/** Waits up to `ms` (10 s) for `check`: rooms over loopback, where objects and clients share the machine. */
export async function untilRoom(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !check(); await sleep(10)) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}

/** @returns a list whose members (room members, clients) are closed after each test of the file */
export function closedAfterEach(): { close(): void }[] {
  const open: { close(): void }[] = [];
  afterEach(() => {
    for (const client of open.splice(0)) client.close();
  });
  return open;
}
