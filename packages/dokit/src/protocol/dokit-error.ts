// dokit's own error frame (`dokit_error`, not the Agents protocol's): its type and every code a
// capability sends in it. Shared by server and client; holds no behaviour.
import type { RoomErrorFrame } from "./rooms";

/**
 * dokit's own error frame (not the Agents protocol's): `{"type":"dokit_error","code":<stable code>,"error":<text>,…}`.
 * Sent for `RATE_LIMITED` (a dropped message, with `retryAfterMs`), `PRESENCE_REJECTED` (a refused presence value),
 * and the rooms' `ROOM_REJECTED` / `ROOM_PUBLISH_FAILED` (with the publish's `id`).
 */
export const DOKIT_ERROR = "dokit_error";
/**
 * dokit's error frame: a message over the connection's rate limit was dropped (`retryAfterMs`: -1 when
 * it can never pass), or a presence value was refused (the connection keeps its previous one).
 */
export type DokitErrorFrame =
  | { type: "dokit_error"; code: "RATE_LIMITED"; error: "Too many messages"; retryAfterMs: number }
  | { type: "dokit_error"; code: "PRESENCE_REJECTED"; error: string }
  | RoomErrorFrame;
