import type { LifecycleErrorCode } from "../lifecycle/errors";

/** The codes McpHandler (dokit/mcp) throws with: the core's, and its own. */
export type McpErrorCode = LifecycleErrorCode;
