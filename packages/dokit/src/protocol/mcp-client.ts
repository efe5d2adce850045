// The MCP-servers frame (`cf_agent_mcp_servers`, an Agents protocol frame) of objects that
// are clients of MCP servers (dokit/mcp-client, docs/mcp-client.md). Shared by server and
// client; holds no behaviour.

/** A connection state of an MCP server an object is a client of (the reference's names). */
export type MCPConnectionState = "authenticating" | "connecting" | "connected" | "discovering" | "ready" | "failed";
/** One MCP server in the `cf_agent_mcp_servers` frame. Never carries tokens or secrets. */
export type MCPServer = {
  name: string;
  server_url: string;
  /** Where the user authorizes the object, while `state` is `authenticating`. */
  auth_url: string | null;
  state: MCPConnectionState;
  error: string | null;
  instructions: string | null;
  /** The server's `ServerCapabilities`, once connected. */
  capabilities: Record<string, unknown> | null;
};
/** A catalogue item (an MCP `Tool`, `Prompt` or `Resource`) and the id of the server offering it. */
export type MCPCatalogueItem = { name: string; serverId: string; [key: string]: unknown };
/** The MCP servers an object is a client of, with their aggregated catalogue: the reference's `MCPServersState`. */
export type MCPServersState = {
  servers: { [id: string]: MCPServer };
  tools: MCPCatalogueItem[];
  prompts: MCPCatalogueItem[];
  resources: (MCPCatalogueItem & { uri: string })[];
};
/** The MCP-servers frame of objects that hold MCP client connections. */
export type McpServersFrame = { type: "cf_agent_mcp_servers"; mcp: MCPServersState };
export const MCP_SERVERS = "cf_agent_mcp_servers";
