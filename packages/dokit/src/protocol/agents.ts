// Frames of the Agents wire protocol (docs/protocol.md): identity, state, rpc, and
// the connection id parameter. Other frames, dokit's own and each capability's, live
// in their own files beside this one. Shared by server and client; holds no
// behaviour beyond building and recognising frames.

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
