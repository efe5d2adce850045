import type { LifecycleErrorCode } from "../lifecycle/errors";

/** The codes McpClients (dokit/mcp-client) throws with: the core's, and its own. */
export type McpClientErrorCode = LifecycleErrorCode | "URL_NOT_ALLOWED" | "UNKNOWN_SERVER" | "SERVER_UNAVAILABLE" | "RECORD_TOO_LARGE";
