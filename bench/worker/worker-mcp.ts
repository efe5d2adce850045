// Entry of the bench worker when dokit/mcp is exported: the rooms of worker.ts plus
//   /mcp/sdk                  the MCP SDK's stateless handler, in the Worker
//   /agents/mcp-room/{name}/mcp  dokit's McpHandler in the McpRoom object (routed by dokit/routing)
//   /mcp/raw/{name}           the SDK's handler inside a plain object (McpRawRoom): the in-object floor
//   /evict/mcp/{name}         test-only eviction of the McpRoom object
import { routeAgentRequest } from "dokit/routing";
import rooms, { evict } from "./worker";
import { sdkHandler } from "./mcp";

export { DokitRoom, ObservedRoom, RawRoom, RefRoom } from "./worker";
export { McpRawRoom, McpRoom } from "./mcp";

interface Env {
  MCP_ROOM: DurableObjectNamespace;
  MCP_RAW: DurableObjectNamespace;
}

export default {
  async fetch(request: Request, env: Env & Parameters<typeof rooms.fetch>[1]): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === "/mcp/sdk") return sdkHandler.fetch(request);
    if (path.startsWith("/mcp/raw/")) return env.MCP_RAW.getByName(path.slice("/mcp/raw/".length)).fetch(request);
    if (path.startsWith("/evict/mcp/")) {
      await evict(env.MCP_ROOM.getByName(path.slice("/evict/mcp/".length)));
      return new Response("evicted");
    }
    return (await routeAgentRequest(request, env)) ?? rooms.fetch(request, env);
  },
};
