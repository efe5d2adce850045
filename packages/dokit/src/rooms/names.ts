// How a room's objects are named and found: shard `<room>#<index>`, sequencer `<room>`.

import { DokitError } from "../lifecycle/errors";
import type { RoomsErrorCode } from "./errors";

/** The path of the route a shard claims for the sequencer's deliveries. */
export const DELIVER_PATH = "/__dokit_room/deliver";
/** The header a delivery carries the room's key in. */
export const KEY_HEADER = "x-dokit-room-key";

/** @returns the object name of shard `index` of `room` */
export function shardName(room: string, index: number): string {
  return `${room}#${index}`;
}

/** @returns the room and shard index an object name stands for (a name without `#` is shard 0 of the room of that name) */
export function parseShardName(name: string): { room: string; index: number } {
  const cut = name.lastIndexOf("#");
  const index = cut < 0 ? NaN : Number(name.slice(cut + 1));
  if (!Number.isInteger(index) || index < 0) return { room: name, index: 0 };
  return { room: name.slice(0, cut), index };
}

/** @returns a 32-bit FNV-1a hash of `text`: the same client id lands on the same shard in every Worker */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * @returns the Durable Object namespace bound to `binding` in `env`
 * @throws DokitError NO_BINDING when `env[binding]` is not one (`what` says which option named it)
 */
export function namespaceOf(env: object, binding: string, what: string): DurableObjectNamespace {
  const value = (env as Record<string, unknown>)[binding];
  if (value !== null && typeof value === "object" && typeof (value as DurableObjectNamespace).idFromName === "function") {
    // SAFETY: it has idFromName, as only a Durable Object namespace does among bindings.
    return value as DurableObjectNamespace;
  }
  throw new DokitError<RoomsErrorCode>("NO_BINDING", `${what}: env.${binding} is not a Durable Object binding (wrangler.jsonc durable_objects.bindings)`);
}

/** @returns the stub of the object `name` of `namespace` */
export function stubOf<T>(namespace: DurableObjectNamespace, name: string): T {
  // SAFETY: the caller names the RPC interface the bound class implements.
  return namespace.get(namespace.idFromName(name)) as unknown as T;
}
