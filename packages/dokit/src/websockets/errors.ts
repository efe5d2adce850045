import type { LifecycleErrorCode } from "../lifecycle/errors";
import type { RpcErrorCode } from "../rpc/errors";

/** The codes WebSockets (dokit/websockets) throws with: the core's, and its own. */
export type WebSocketsErrorCode = LifecycleErrorCode | RpcErrorCode | "INVALID_TAGS" | "ATTACHMENT_TOO_LARGE" | "INVALID_STATE";
