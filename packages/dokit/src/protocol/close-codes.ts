// Close codes of any connection to a dokit object: the ones the protocol names, and the
// refusals dokit sends while opening, replacing or resetting a connection (docs/protocol.md).
// A capability's own closes live in its protocol file. Shared by server and client; holds no behaviour.

/** Close codes the protocol names. */
export const CLOSE_DESTROYED = 1001;
export const CLOSE_INTERNAL_ERROR = 1011;
/**
 * A hibernating connection replaced by a newer one with the same id (`_pk`). In 4000–4999, so
 * clients treat it as final: two live clients sharing an id do not take turns replacing each other.
 */
export const CLOSE_REPLACED = 4009;
export const REPLACED_REASON = "Connection replaced";
/**
 * Refusals of an upgrade that dokit itself answers, sent as a close of an accepted socket (a
 * browser's WebSocket never sees an HTTP error body). In 4000–4999, so clients treat them as final.
 * Named after the HTTP status the same refusal of a plain request gets.
 */
/** `_pk` is not a valid connection id (longer than 252 characters). */
export const CLOSE_INVALID_ID = 4400;
export const INVALID_ID_REASON = "dokit: connection id (_pk) over 252 characters";
/** The path names no Durable Object binding (the Worker's `routeAgentRequest`). */
export const CLOSE_NO_AGENT = 4404;
/** The object failed while opening the connection: it failed to start, or a decision, a connect frame or `onConnect` threw. */
export const CLOSE_OPEN_FAILED = 4500;
export const OPEN_FAILED_REASON = "dokit: internal error while opening the connection (see the server's log)";
/** The object accepts no WebSocket upgrades: no WebSockets capability is installed on it. */
export const CLOSE_NO_WEBSOCKETS = 4501;
export const NO_WEBSOCKETS_REASON = "dokit: this object has no WebSockets: Lifecycle.install(this).use(webSockets) (building one is not enough)";
/**
 * An upgrade that reached an object while `destroy()` resets it: refused, and not final (clients
 * reconnect, and reach the fresh instance). The standard "service restart" code.
 */
export const CLOSE_RESTARTING = 1012;
export const RESTARTING_REASON = "dokit: Durable Object destroyed; reconnect";
/** Close codes a close event may report but no endpoint may send: a close reciprocating them carries no code. */
export const RESERVED_CLOSE_CODES: ReadonlySet<number> = new Set([1005, 1006, 1015]);
