// How a room's objects are named and found: shard `<room>#<index>`, sequencer `<room>`.

import { DokitError } from "../lifecycle/errors";
import type { RoomsErrorCode } from "./errors";

/** The path of the route a shard claims for the sequencer's deliveries. */
export const DELIVER_PATH = "/__dokit_room/deliver";
/** The header a delivery carries the room's key in. */
export const KEY_HEADER = "x-dokit-room-key";
/** The header the router tells a shard its capacity in (it owns the header: a client's copy never arrives). */
export const CAPACITY_HEADER = "x-dokit-room-capacity";
/** The header of a shard's refusal when it is at capacity: the router tries the next shard. */
export const FULL_HEADER = "x-dokit-room-full";

/** @returns the object name of shard `index` of `room` */
export function shardName(room: string, index: number): string {
  return `${room}#${index}`;
}

/** The index part of a shard name exactly as {@link shardName} writes it for the router's 1,024 shards at most: no sign, space or leading zero. */
const CANONICAL_INDEX = /^(0|[1-9][0-9]{0,3})$/;
/** The most shards a room has (the router's largest `shardCount`). */
const MAX_SHARDS = 1024;

/**
 * @returns the room and shard index an object name stands for. Only a name {@link shardName} makes is
 * a shard of its room (`<room>#<index>`, the index in canonical form, below 1,024); any other name
 * (`a#01`, `a#+1`, `a# 1`, a name without `#`) is shard 0 of the room of that whole name, so it
 * can never stand in for another shard of a room
 */
export function parseShardName(name: string): { room: string; index: number } {
  const cut = name.lastIndexOf("#");
  const digits = cut < 0 ? "" : name.slice(cut + 1);
  if (!CANONICAL_INDEX.test(digits) || Number(digits) >= MAX_SHARDS) return { room: name, index: 0 };
  return { room: name.slice(0, cut), index: Number(digits) };
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
