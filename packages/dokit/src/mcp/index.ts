export { McpHandler } from "./handler";
export type { McpNotifier } from "./notify";
export type { LegacyMode, McpCorsOptions, McpHandlerOptions, McpServerContext, McpServerFactory, SessionOwner } from "./options";
export type { McpErrorCode } from "./errors";
