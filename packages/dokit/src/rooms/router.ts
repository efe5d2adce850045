// The Worker side of a room: which shard a connection goes to, and publishing from the Worker.

import { DokitError } from "../lifecycle/errors";
import { BASE_HEADER, PROPS_HEADER } from "../lifecycle/headers";
import { CONNECTION_ID_PARAM } from "../protocol/agents";
import { ROOM_SHARD_PARAM } from "../protocol/rooms";
import type { RoomsErrorCode } from "./errors";
import { CAPACITY_HEADER, FULL_HEADER, hash, namespaceOf, shardName, stubOf } from "./names";
import { filters, type RoomPublishOptions } from "./publish-filters";
import type { SequencerApi } from "./types";

/** Options of {@link routeRoomRequest}. */
export interface RoomRouteOptions {
  /** The name of the binding of the shard class (a Durable Object with `RoomShard`). */
  shards: string;
  /** The room. Shards are named `<room>#<index>`. */
  room: string;
  /**
   * How many shards the room spreads connections over: 1 to 1,024. Raising it moves no open
   * connection: new connections spread over more shards.
   */
  shardCount: number;
  /**
   * The most connections a shard takes from the router: 1 to 32,768 (default: no cap). A shard at
   * its capacity refuses the connection and the router tries the next index (one extra call per
   * full shard, none while the chosen shard has room); when every shard is full the client gets
   * 503. The cap is soft by the connections that arrive at one shard at the same moment.
   */
  capacity?: number;
  /** Props for the shard (auth, user): passed to `start(props)` and `getCurrentAgent().props`. JSON-serializable. */
  props?: Record<string, unknown>;
}

/**
 * Sends a connection to one shard of a room: a reconnecting client that names its shard
 * (`?shard=<index>`, from its welcome frame) stays there; any other goes to the shard its id (`_pk`)
 * hashes to. With a `capacity`, a shard that holds that many connections refuses, and the next
 * index is tried. No round trip while the chosen shard has room: the choice is made here. A
 * request without `_pk` gets one, so the shard and the hash agree on it. Authenticate the request
 * before you route it.
 * @returns the shard's response (101 for an upgrade), or 503 when every shard is at capacity
 * @throws DokitError INVALID_ARGUMENT for a shard count or capacity out of range, NO_BINDING when `shards` names no binding
 */
export async function routeRoomRequest(request: Request, env: object, options: RoomRouteOptions): Promise<Response> {
  const { shardCount, capacity } = options;
  if (!Number.isInteger(shardCount) || shardCount < 1 || shardCount > 1024) {
    throw new DokitError<RoomsErrorCode>("INVALID_ARGUMENT", `routeRoomRequest: shardCount must be an integer from 1 to 1024 (got ${String(shardCount)})`);
  }
  if (capacity !== undefined && (!Number.isInteger(capacity) || capacity < 1 || capacity > 32_768)) {
    throw new DokitError<RoomsErrorCode>("INVALID_ARGUMENT", `routeRoomRequest: capacity must be an integer from 1 to 32768 (got ${String(capacity)})`);
  }
  const namespace = namespaceOf(env, options.shards, "routeRoomRequest shards");
  const url = new URL(request.url);
  let id = url.searchParams.get(CONNECTION_ID_PARAM);
  if (!id) url.searchParams.set(CONNECTION_ID_PARAM, (id = crypto.randomUUID()));
  const hint = Number(url.searchParams.get(ROOM_SHARD_PARAM) ?? NaN);
  const first = Number.isInteger(hint) && hint >= 0 && hint < shardCount ? hint : hash(id) % shardCount;
  // The router owns these headers: a client's own copies never reach the shard.
  const headers = new Headers(request.headers);
  headers.set(BASE_HEADER, url.pathname);
  if (options.props) headers.set(PROPS_HEADER, JSON.stringify(options.props));
  else headers.delete(PROPS_HEADER);
  if (capacity !== undefined) headers.set(CAPACITY_HEADER, String(capacity));
  else headers.delete(CAPACITY_HEADER);
  for (let attempt = 0; attempt < (capacity === undefined ? 1 : shardCount); attempt++) {
    const stub = stubOf<DurableObjectStub>(namespace, shardName(options.room, (first + attempt) % shardCount));
    const response = await stub.fetch(new Request(url, new Request(request, { headers })));
    if (capacity === undefined || response.headers.get(FULL_HEADER) !== "1") return response;
    await response.body?.cancel();
  }
  return new Response("every shard of the room is full", { status: 503, headers: { "retry-after": "5" } });
}

/** Options of {@link publishToRoom}. */
export interface PublishToRoomOptions extends RoomPublishOptions {
  /** The name of the binding of `RoomSequencer` (default `"ROOM_SEQUENCER"`). */
  sequencer?: string;
  /** An id for the message: publishing again with the same id within the log window is a no-op that answers the same seq. Default: a new UUID. */
  id?: string;
}

/**
 * Publishes to every connection of a room from the Worker (or any server code), with one call to the
 * room's sequencer.
 * @returns the message's seq
 * @throws DokitError INVALID_ARGUMENT when the data is not JSON or over 1 MiB as JSON, NO_BINDING when the sequencer binding is missing
 */
export async function publishToRoom(env: object, room: string, data: unknown, options: PublishToRoomOptions = {}): Promise<number> {
  const json = JSON.stringify(data);
  if (json === undefined) throw new DokitError<RoomsErrorCode>("INVALID_ARGUMENT", "publishToRoom: the data is not JSON");
  const sequencer = stubOf<SequencerApi>(namespaceOf(env, options.sequencer ?? "ROOM_SEQUENCER", "publishToRoom sequencer"), room);
  const published = await sequencer.publish(null, [{ id: options.id ?? crypto.randomUUID(), data: json, ...filters(options) }]);
  return published.seqs[0] as number;
}
