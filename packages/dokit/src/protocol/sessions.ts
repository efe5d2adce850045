// The wire of live session history (dokit/sessions on the server, SessionView in dokit/client): dokit's
// frames, not the Agents protocol's. One frame type both ways, `dokit_session`, with an `op`.

/** The frame type of live session history, both ways. */
export const SESSION = "dokit_session";

/** A `dokit_error` code: the connection may not read (or write) that session, or is readonly. */
export const SESSION_FORBIDDEN = "SESSION_FORBIDDEN";
/** A `dokit_error` code: a malformed session frame or message; nothing was stored. */
export const SESSION_REJECTED = "SESSION_REJECTED";
/** A `dokit_error` code: a client message over the object's `maxClientMessageBytes`; nothing was stored. */
export const SESSION_TOO_LARGE = "MESSAGE_TOO_LARGE";

/** The most sessions one connection may watch at once. */
export const MAX_WATCHED_SESSIONS = 8;
/** The longest session id, in UTF-16 units, a client may name. */
export const MAX_SESSION_ID_LENGTH = 256;
/** The most bytes of messages one page holds (a single larger message comes alone), and the default. */
export const MAX_PAGE_BYTES = 4 * 1024 * 1024;
export const DEFAULT_PAGE_BYTES = 1024 * 1024;
/** The most messages one page holds, and the default. */
export const MAX_PAGE_MESSAGES = 200;
export const DEFAULT_PAGE_MESSAGES = 50;

/** A message as it travels (a session message, `createdAt` as its ISO string). */
export type WireMessage = { id: string; role: string; parts: unknown[]; metadata?: unknown; createdAt?: string };

/**
 * What a client sends:
 * - `watch` / `unwatch`: start or stop receiving the session's changes as `event` frames;
 * - `page`: the newest messages of the path ending at `leafId` (default: the active leaf) that are older
 *   than `before` (default: all), at most `limit` messages and `maxBytes` bytes, answered by a `page` frame;
 * - `append` / `update`: a write, with `source: "client"` (reserved metadata removed, size bounded), answered by `ack`.
 */
export type SessionClientFrame =
  | { type: typeof SESSION; op: "watch" | "unwatch"; session: string }
  | { type: typeof SESSION; op: "page"; id: string; session: string; leafId?: string; before?: string; maxBytes?: number; limit?: number }
  | { type: typeof SESSION; op: "append"; id: string; session: string; message: WireMessage; parentId?: string | null }
  | { type: typeof SESSION; op: "update"; id: string; session: string; message: WireMessage };

/** A change as watchers receive it (the server's change-feed event, without its sessionId). */
export type WireSessionEvent =
  | { type: "append"; message: WireMessage; parentId: string | null; inserted: boolean }
  | { type: "update"; message: WireMessage }
  | { type: "delete"; messageIds: string[] }
  | { type: "clear" }
  | { type: "compact" }
  | { type: "compaction" }
  | { type: "import"; message: WireMessage; parentId: string | null };

/**
 * What the server sends: a `page` (root → leaf order; `more`: older messages exist on the path), an `ack`
 * of a write (`inserted` for an append, `found` for an update), or a watched session's `event`. A refusal is
 * `{"type":"dokit_error","code":SESSION_FORBIDDEN|SESSION_REJECTED|MESSAGE_TOO_LARGE,"error","id"?,"session"?}`.
 */
export type SessionServerFrame =
  | { type: typeof SESSION; op: "page"; id: string; session: string; messages: WireMessage[]; more: boolean }
  | { type: typeof SESSION; op: "ack"; id: string; session: string; inserted?: boolean; found?: boolean }
  | { type: typeof SESSION; op: "event"; session: string; event: WireSessionEvent };

/** dokit's error frame as session history sends it. */
export type SessionErrorFrame = { type: "dokit_error"; code: string; error: string; id?: string; session?: string };
