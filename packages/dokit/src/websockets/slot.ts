// Connection slots: a plug-in's (or another capability's) named value on each connection, kept in
// the connection's attachment beside dokit's own flags (attachment.ts), so it survives hibernation.
import type { ConnectionSlot, SlotOptions } from "../lifecycle/capability";
import { DokitError } from "../lifecycle/errors";
import { isFlagName } from "./attachment";
import { flagsOf, updateFlags } from "./connection";
import type { WebSocketsErrorCode } from "./errors";
import { SLOT_NAMES } from "./internal";
import type { WebSockets } from "./websockets";

const encoder = new TextEncoder();

/**
 * @returns the slot `name` of the connections of `sockets`: values bounded by `maxBytes` (default 4,096) as JSON, checked by `check` when read
 * @throws DokitError RESERVED_NAME for one of dokit's own flags, DUPLICATE_CLAIM for a name claimed already
 */
export function connectionSlot<T>(sockets: WebSockets, name: string, { maxBytes = 4096, check }: SlotOptions<T> = {}): ConnectionSlot<T> {
  const taken = (sockets[SLOT_NAMES] ??= new Set());
  if (isFlagName(name) || taken.has(name)) {
    throw new DokitError<WebSocketsErrorCode>(taken.has(name) ? "DUPLICATE_CLAIM" : "RESERVED_NAME", `connection slot "${name}" is taken`);
  }
  taken.add(name);
  return {
    name,
    get(connection) {
      const value = (flagsOf(connection) as unknown as Record<string, unknown>)[name];
      // SAFETY: only set() stores under this name (a value another version stored is what `check` is for).
      return value === undefined || (check && !check(value)) ? undefined : (value as T);
    },
    set(connection, value) {
      const json = value === undefined ? "" : JSON.stringify(value);
      if (json === undefined || encoder.encode(json).byteLength > maxBytes) {
        throw new DokitError<WebSocketsErrorCode>("INVALID_ARGUMENT", `connection slot "${name}" holds JSON of at most ${maxBytes} bytes`);
      }
      updateFlags(connection, { [name]: value });
    },
  };
}
