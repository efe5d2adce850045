export { McpClients } from "./mcp-clients";
export type { WithServerId } from "./mcp-clients";
export type { AddServerOptions, AddServerResult, McpClientsOptions, McpServerInfo, TransportOptions } from "./options";
export type { MCPConnectionState, MCPServer, MCPServersState } from "../protocol/mcp-client";
export type { McpClientErrorCode } from "./errors";
