import type { LifecycleErrorCode } from "../lifecycle/errors";

/** The codes the JSON-rpc engine (serving callables on every transport) throws with: the core's, and its own. */
export type RpcErrorCode = LifecycleErrorCode | "METHOD_NOT_FOUND" | "INVALID_TARGET";
