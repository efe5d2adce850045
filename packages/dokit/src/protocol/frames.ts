// Frame literals of the Agents wire protocol (docs/protocol.md).
// Shared by server and client; holds no behaviour beyond building and
// recognising frames.

/** Sent first on a protocol-enabled connection. */
export type IdentityFrame = {
  type: "cf_agent_identity";
  name: string;
  agent: string;
  stateFollows?: true;
};
/** The synced state; `state` may be `null`. */
export type StateFrame = { type: "cf_agent_state"; state: unknown };
/** A refused client state update. */
export type StateErrorFrame = {
  type: "cf_agent_state_error";
  error: "Connection is readonly" | "State update rejected";
};
/** A client's call. */
export type RpcRequestFrame = { type: "rpc"; id: string; method: string; args: unknown[] };
/** A server's answer to a call: one result, a stream chunk, a stream end or an error. */
export type RpcResponseFrame =
  | { type: "rpc"; id: string; success: true; done: boolean; result?: unknown }
  | { type: "rpc"; id: string; success: false; error: string };

export const IDENTITY = "cf_agent_identity";
export const STATE = "cf_agent_state";
export const STATE_ERROR = "cf_agent_state_error";
export const RPC = "rpc";

/** Query parameter carrying the connection id. */
export const CONNECTION_ID_PARAM = "_pk";

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

/** @returns whether `frame` is a well-formed rpc request (anything else is an ordinary message) */
export function isRpcRequest(frame: Record<string, unknown>): frame is RpcRequestFrame {
  return frame.type === RPC && typeof frame.id === "string" && typeof frame.method === "string" && Array.isArray(frame.args);
}

/** @returns whether `frame` is a client state update (`state` must be an own key) */
export function isStateFrame(frame: unknown): frame is StateFrame {
  // SAFETY: `?.` reads `type` of any value (null and primitives give false before hasOwn runs).
  return (frame as { type?: unknown } | null)?.type === STATE && Object.hasOwn(frame as object, "state");
}

/** Error texts clients show to users; exact. */
export const rpcErrors = {
  notFound: (method: string) => `Method ${method} does not exist`,
  rpcTargetResult: (method: string) =>
    `Method ${method} returns an RpcTarget, which only the capnweb transport can carry`,
  notSerializable: (reason: string) => `Result is not JSON-serializable: ${reason}`,
} as const;
