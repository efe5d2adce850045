import type { SocketOwner } from "./capability";
import type { Lifecycle } from "./lifecycle";

// Wiring on demand (lifecycle.ts, `use()`): an object built on a wake attaches its capabilities
// only when an event needs the dispatch table, if its class's first object showed that it may.
// These keys are internal: dokit's own capabilities carry them, a user's capability does not
// (and an object that uses one is always wired at once).

/**
 * Marks a capability that works before it is attached: `true`, or for the capability that takes
 * the sockets, the socket owner it will claim (the lifecycle hands it socket events meanwhile).
 * Such a capability claims no start hook and no observer, and among frame types only the state
 * frame and rpc (WebSockets looks up no other type in an unwired table: websockets.ts).
 */
export const WAKE = Symbol("dokit.wake");
/** The lifecycle a capability was used on while it waits to be attached. */
export const BOUND = Symbol("dokit.bound");
/** The lifecycle's method that attaches the capabilities waiting to be (a no-op once wired). */
export const WIRE = Symbol("dokit.wire");

/** A capability as the wiring on demand sees it. */
export type Wakeable = { [WAKE]?: SocketOwner | true; [BOUND]?: Lifecycle & { [WIRE](): void } };

