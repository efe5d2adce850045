import type { LifecycleErrorCode } from "../lifecycle/errors";
import type { RpcErrorCode } from "../rpc/errors";

/** The codes Callables (dokit/callables) throws with: the core's, and its own. */
export type CallablesErrorCode = LifecycleErrorCode | RpcErrorCode | "INVALID_TARGET";
