import { DokitError, errorMessage } from "../lifecycle/errors";
import { splitRows } from "../rows/text";
import type { StateErrorCode } from "./errors";

/**
 * The largest serialized state, in UTF-8 bytes: 32 MiB, the runtime's WebSocket
 * message limit (a larger frame closes the socket with 1009), less 1 KiB for the
 * `{"type":"cf_agent_state","state":…}` frame around the value, so the state
 * frame sent on connect and on every change always fits one message. A value
 * over 1 MiB is stored across several rows (rows/text.ts).
 */
export const MAX_STATE_BYTES = 32 * 1024 * 1024 - 1024;

/** A value turned into the JSON text that is stored. */
export interface Serialized {
  json: string;
  /** Whether `JSON.parse(json)` differs from the value (a `toJSON`, an `undefined` property, a class instance). */
  lossy: boolean;
  /** `json` cut into the parts stored one per row (just `json` for a value under 1 MiB). */
  parts: string[];
}

// Built-ins JSON would silently turn into `{}` or drop: refused instead.
const LOSSY_BUILT_INS: ReadonlyArray<abstract new (...args: never[]) => unknown> = [
  Map,
  Set,
  WeakMap,
  WeakSet,
  WeakRef,
  Promise,
  RegExp,
  Error,
  ArrayBuffer,
];

/**
 * Serializes a state value strictly: BigInt, functions, symbols, non-finite
 * numbers, cycles, Maps, Sets, binary data and a top-level `undefined` are
 * refused rather than silently changed.
 * @throws DokitError `INVALID_STATE` for a value JSON cannot carry, `STATE_TOO_LARGE` over {@link MAX_STATE_BYTES}
 */
export function serializeState(value: unknown): Serialized {
  let lossy = false;
  function replacer(this: unknown, key: string, current: unknown): unknown {
    switch (typeof current) {
      case "bigint":
      case "function":
      case "symbol":
        throw notJson(`a ${typeof current === "bigint" ? "BigInt" : typeof current}`, key);
      case "number":
        if (!Number.isFinite(current)) throw notJson(String(current), key);
        break;
      case "undefined":
        lossy = true;
        break;
      case "object":
        if (current !== null && !Array.isArray(current)) {
          const proto: unknown = Object.getPrototypeOf(current);
          if (proto !== Object.prototype && proto !== null) {
            if (ArrayBuffer.isView(current) || LOSSY_BUILT_INS.some((type) => current instanceof type)) {
              throw notJson(`a ${current.constructor?.name ?? "built-in object"}`, key);
            }
            lossy = true;
          }
        }
        break;
    }
    // SAFETY: JSON.stringify calls the replacer with the holder object as `this`.
    if ((this as Record<string, unknown>)[key] !== current) lossy = true; // a toJSON() replaced it
    return current;
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(value, replacer);
  } catch (error) {
    if (error instanceof DokitError) throw error;
    const reason = errorMessage(error);
    throw new DokitError<StateErrorCode>("INVALID_STATE", `State values must be JSON-serializable: ${reason}`, { cause: error });
  }
  if (json === undefined) throw notJson("undefined", "");
  // A value small enough for one row whatever its characters is neither measured nor copied.
  const { parts, bytes } = splitRows(json);
  if (bytes > MAX_STATE_BYTES) {
    throw new DokitError<StateErrorCode>(
      "STATE_TOO_LARGE",
      `the state is ${bytes} bytes as JSON; State holds at most ${MAX_STATE_BYTES} bytes ` +
        "(32 MiB, the WebSocket message limit, less 1 KiB for the frame that carries it). " +
        "Keep large or growing data in your own SQL tables and sync a summary.",
    );
  }
  return { json, lossy, parts };
}

function notJson(what: string, key: string): DokitError {
  const where = key === "" ? "" : ` (at key "${key}")`;
  return new DokitError<StateErrorCode>("INVALID_STATE", `State values must be JSON-serializable: found ${what}${where}`);
}
