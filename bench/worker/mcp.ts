// The MCP pair: the same one-tool server served by dokit's McpHandler inside a
// Durable Object, and by the MCP SDK's own stateless handler in the Worker.
// Loaded only when dokit/mcp is exported (bench/run.ts picks wrangler.mcp.jsonc).
import { DurableObject } from "cloudflare:workers";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { Lifecycle } from "dokit/lifecycle";
import { McpHandler } from "dokit/mcp";

/** A fresh server with one pure tool, `add` (no storage, so only the serving path differs). */
function buildServer(): McpServer {
  const server = new McpServer({ name: "bench", version: "1.0.0" });
  server.registerTool("add", { description: "Adds two numbers", inputSchema: z.object({ a: z.number(), b: z.number() }) }, async ({ a, b }) => ({
    content: [{ type: "text" as const, text: String(a + b) }],
  }));
  return server;
}

export class McpRoom extends DurableObject {
  readonly mcp = new McpHandler({ server: () => buildServer() });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);
}

/** The SDK's own Worker-level handler: a fresh server per request. */
export const sdkHandler = createMcpHandler(() => buildServer());

/** The floor for an MCP server inside an object: a plain Durable Object handing every request to the SDK's handler. */
export class McpRawRoom extends DurableObject {
  fetch(request: Request): Promise<Response> {
    return sdkHandler.fetch(request);
  }
}
