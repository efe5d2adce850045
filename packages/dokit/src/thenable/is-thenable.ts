// Telling a synchronous answer from an asynchronous one: handlers, rpc methods and
// schema checks may return either, and the synchronous path runs without a promise.

/** @returns whether `value` is a thenable (a promise, or anything `await` would wait for) */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === "function";
}
