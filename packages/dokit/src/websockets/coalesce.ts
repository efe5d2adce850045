import { DokitError } from "../lifecycle/errors";
import type { WebSocketsErrorCode } from "./errors";

/** The tick of coalesced broadcasts when `coalesceMs` is not set, in milliseconds. */
export const COALESCE_MS = 50;

/** A serialized message, as a broadcast sends it. */
type Payload = string | ArrayBuffer | ArrayBufferView;

/**
 * Holds the latest broadcast per key until the tick ends, then sends each once.
 *
 * One `setTimeout` serves every key: it is armed by the first coalesced call while none is
 * pending and is not re-armed when it fires, so an idle object holds no timer (a pending timer
 * keeps the object in memory, for at most one tick).
 */
export class Coalescer<Options> {
  readonly #held = new Map<string, [Payload, Options]>();
  #timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param ms - the tick
   * @param send - sends one held broadcast (a plain `broadcast` of the serialized message)
   */
  constructor(
    readonly ms: number,
    readonly send: (payload: Payload, options: Options) => void,
  ) {}

  /** Replaces what `key` holds for this tick (a key keeps its place in the send order), starting a tick if none runs. */
  hold(key: unknown, payload: Payload, options: Options): void {
    if (typeof key !== "string") {
      throw new DokitError<WebSocketsErrorCode>("INVALID_ARGUMENT", `broadcast: coalesce must be a string key (got ${typeof key})`);
    }
    this.#held.set(key, [payload, options]);
    this.#timer ??= setTimeout(() => this.#flush(), this.ms);
  }

  /** Drops what is held and the pending tick. */
  cancel(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#held.clear();
  }

  #flush(): void {
    this.#timer = undefined;
    const held = [...this.#held.values()];
    this.#held.clear();
    for (const [payload, options] of held) {
      try {
        this.send(payload, options);
      } catch (error) {
        console.error("dokit: a coalesced broadcast failed", error);
      }
    }
  }
}

/** @returns `value` when it is a tick `coalesceMs` accepts (16 to 1000 ms); throws otherwise */
export function checkCoalesceMs(value: unknown): number {
  if (typeof value !== "number" || !(value >= 16 && value <= 1000)) {
    throw new DokitError<WebSocketsErrorCode>("INVALID_ARGUMENT", `WebSockets: coalesceMs must be a number of milliseconds from 16 to 1000 (got ${String(value)})`);
  }
  return value;
}
