import { DokitError } from "../lifecycle/errors";
import type { WebSocketsErrorCode } from "./errors";

/** A serialized message, as a broadcast sends it. */
type Payload = string | ArrayBuffer | ArrayBufferView;

/**
 * Replaces what `key` holds for this tick (a key keeps its place in the send order), starting a
 * tick if none runs. A tick that ends after the object closed its connections sends to none.
 */
export type Hold<Options> = ((key: string, payload: Payload, options: Options) => void) & {
  /** @returns how many keys wait for the tick (0: no timer pending) */
  waiting(): number;
};

/**
 * Holds the latest broadcast per key until the tick ends, then sends each once, in the order the
 * keys were first held. One `setTimeout` serves every key: armed by the first call while nothing
 * is held and never re-armed by itself, so an idle object holds no timer (a pending timer keeps the
 * object in memory, for at most one tick).
 * @param ms - the tick, 16 to 1000 ms
 * @param send - sends one held broadcast
 * @returns the function that holds a broadcast
 */
function coalescer<Options>(ms: number, send: (payload: Payload, options: Options) => void): Hold<Options> {
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
  const hold = (key: string, payload: Payload, options: Options) => {
    held.set(key, [payload, options]);
    timer ??= setTimeout(flush, ms);
  };
  return Object.assign(hold, { waiting: () => held.size });
}

/** Makes the holder of one WebSockets' coalesced broadcasts: what `new WebSockets({ coalescing })` takes. */
export type Coalescing = <Options>(send: (payload: Payload, options: Options) => void) => Hold<Options>;

/**
 * Turns on `broadcast(message, { coalesce: key })`: `new WebSockets({ coalescing: coalesceBroadcasts() })`.
 * Opt-in by import, so objects that never coalesce do not carry it.
 * @param options - `tickMs`: how long a key's latest message waits, 16 to 1000 ms (default 50)
 * @returns the `coalescing` option
 * @throws DokitError INVALID_ARGUMENT for a tick outside 16 to 1000 ms
 */
export function coalesceBroadcasts(options: { tickMs?: number } = {}): Coalescing {
  const ms: unknown = options.tickMs ?? 50;
  if (typeof ms !== "number" || !(ms >= 16 && ms <= 1000)) {
    throw new DokitError<WebSocketsErrorCode>("INVALID_ARGUMENT", `coalesceBroadcasts: tickMs must be 16 to 1000 ms (got ${String(ms)})`);
  }
  return (send) => coalescer(ms, send);
}
