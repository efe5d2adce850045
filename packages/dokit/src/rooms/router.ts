// The Worker side of a room: which shard a connection goes to, and publishing from the Worker.

import { DokitError } from "../lifecycle/errors";
import { BASE_HEADER, PROPS_HEADER } from "../lifecycle/headers";
import { CONNECTION_ID_PARAM, ROOM_SHARD_PARAM } from "../protocol/frames";
import type { RoomsErrorCode } from "./errors";
import { hash, namespaceOf, shardName, stubOf } from "./names";
import { filters, type RoomPublishOptions } from "./outbox";
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
  /** Props for the shard (auth, user): passed to `start(props)` and `getCurrentAgent().props`. JSON-serializable. */
  props?: Record<string, unknown>;
}

/**
 * Sends a connection to one shard of a room: a reconnecting client that names its shard
 * (`?shard=<index>`, from its welcome frame) stays there; any other goes to the shard its id (`_pk`)
 * hashes to. No round trip: the choice is made here. A request without `_pk` gets one, so the
 * shard and the hash agree on it. Authenticate the request before you route it.
 * @returns the shard's response (101 for an upgrade)
 * @throws DokitError INVALID_ARGUMENT for a shard count out of range, NO_BINDING when `shards` names no binding
 */
export async function routeRoomRequest(request: Request, env: object, options: RoomRouteOptions): Promise<Response> {
  const { shardCount } = options;
  if (!Number.isInteger(shardCount) || shardCount < 1 || shardCount > 1024) {
    throw new DokitError<RoomsErrorCode>("INVALID_ARGUMENT", `routeRoomRequest: shardCount must be an integer from 1 to 1024 (got ${String(shardCount)})`);
  }
  const namespace = namespaceOf(env, options.shards, "routeRoomRequest shards");
  const url = new URL(request.url);
  let id = url.searchParams.get(CONNECTION_ID_PARAM);
  if (!id) url.searchParams.set(CONNECTION_ID_PARAM, (id = crypto.randomUUID()));
  const hint = Number(url.searchParams.get(ROOM_SHARD_PARAM) ?? NaN);
  const index = Number.isInteger(hint) && hint >= 0 && hint < shardCount ? hint : hash(id) % shardCount;
  // The router owns these headers: a client's own copies never reach the shard.
  const headers = new Headers(request.headers);
  headers.set(BASE_HEADER, url.pathname);
  if (options.props) headers.set(PROPS_HEADER, JSON.stringify(options.props));
  else headers.delete(PROPS_HEADER);
  const stub = stubOf<DurableObjectStub>(namespace, shardName(options.room, index));
  return stub.fetch(new Request(url, new Request(request, { headers })));
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
