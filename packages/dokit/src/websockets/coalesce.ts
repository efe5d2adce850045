import { DokitError } from "../lifecycle/errors";
import type { WebSocketsErrorCode } from "./errors";

/** A serialized message, as a broadcast sends it. */
type Payload = string | ArrayBuffer | ArrayBufferView;

/**
 * Replaces what `key` holds for this tick (a key keeps its place in the send order), starting a
 * tick if none runs. A tick that ends after the object closed its connections sends to none.
 */
export type Hold<Options> = (key: string, payload: Payload, options: Options) => void;

/**
 * Holds the latest broadcast per key until the tick ends, then sends each once, in the order the
 * keys were first held. One `setTimeout` serves every key: armed by the first call while nothing
 * is held and never re-armed by itself, so an idle object holds no timer (a pending timer keeps the
 * object in memory, for at most one tick).
 * @param ms - the tick (16 to 1000 ms; `undefined`: 50)
 * @param send - sends one held broadcast
 * @returns the function that holds a broadcast
 */
export function coalescer<Options>(ms = 50, send: (payload: Payload, options: Options) => void): Hold<Options> {
  const held = new Map<string, [Payload, Options]>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    timer = undefined;
    const due = [...held.values()];
    held.clear();
    for (const [payload, options] of due) {
      try {
        send(payload, options);
      } catch (error) {
        console.error("dokit: a coalesced broadcast failed", error);
      }
    }
  };
  return (key, payload, options) => {
    held.set(key, [payload, options]);
    timer ??= setTimeout(flush, ms);
  };
}

/** Throws unless `ms` is a tick `coalesceMs` accepts: a number of milliseconds from 16 to 1000. */
export function checkCoalesceMs(ms: unknown): void {
  if (!((ms as number) >= 16 && (ms as number) <= 1000) || typeof ms !== "number") {
    throw new DokitError<WebSocketsErrorCode>("INVALID_ARGUMENT", `WebSockets: coalesceMs must be 16 to 1000 ms (got ${String(ms)})`);
  }
}
