// What the files of this folder share of a WebSockets (websockets.ts): the symbol keys of its
// internal fields, and the two lookups every part needs. Module-level symbols are minified like
// private names and reach no code outside this folder (index.ts exports none of them), so the
// parts can live in their own files without making the fields public.
import type { Dispatch } from "../lifecycle/capability";
import { DokitError } from "../lifecycle/errors";
import type { Lifecycle } from "../lifecycle/lifecycle";
import { lifecycleOf } from "../lifecycle/wake";
import type { WebSocketsErrorCode } from "./errors";
import type { WebSockets } from "./websockets";

/** The options the WebSockets was built with. */
export const OPTIONS = Symbol();
/** The handler sets added with `use()`, in order. */
export const HANDLERS = Symbol();
/** Its plug-ins (plugin.ts): those the options name (`state`, `rateLimit`, `heartbeat`, `capnweb`, `presence`, `yjs`), then `plugins`. */
export const PLUGINS = Symbol();
/** Whether a plug-in claims binary messages. */
export const BINARY = Symbol();
/** The plug-ins that count inbound messages (`drops`), or `undefined` for none. */
export const GATES = Symbol();
/** The names of the connection slots claimed on it (slot.ts). */
export const SLOT_NAMES = Symbol();
/** The lifecycle it is attached to, once attached. */
export const LIFECYCLE = Symbol();
/** That lifecycle's dispatch table, once attached. */
export const DISPATCH = Symbol();
/** The connection inside its (synchronous) connect sequence: left out of broadcasts. */
export const CONNECTING = Symbol();
/** Connections refused while opening: their close runs no `onClose` handler. */
export const REFUSED = Symbol();
/** Connections closed by the server (their readyState may lag). */
export const CLOSED = Symbol();
/** Non-hibernating connections (Cap'n Web sessions), by id. */
export const LIVE = Symbol();
/** The open hibernating connections as last counted, while the count holds (open-connections.ts). */
export const COUNTED = Symbol();
/** The handle its transport plug-ins serve their connections through (transport-host.ts), once made. */
export const HOST = Symbol();

/** @returns the lifecycle the WebSockets was installed on (or waits to be attached to) */
export function installedOn(sockets: WebSockets): Lifecycle {
  const lifecycle = lifecycleOf(sockets, sockets[LIFECYCLE]);
  if (!lifecycle) throw notInstalled();
  return lifecycle;
}

/**
 * @returns the dispatch table of the lifecycle it is attached to, for work that runs only once it
 *   is (an upgrade: the lifecycle wires the object before it hands one over). It wires nothing: a
 *   frame's claim on an object that waits to be wired is found through claimOf (dispatch.ts)
 */
export function dispatchOf(sockets: WebSockets): Dispatch {
  const dispatch = sockets[DISPATCH];
  if (!dispatch) throw notInstalled();
  return dispatch;
}

function notInstalled(): DokitError {
  return new DokitError<WebSocketsErrorCode>("NOT_INSTALLED", "this WebSockets is not installed yet: Lifecycle.install(this).use(webSockets)");
}
