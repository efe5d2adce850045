// MCP servers for the Node-side tests (mcp.test.ts): one object per
// scenario, reached over loopback at /agents/<kebab binding>/<name>/mcp.
import { McpServer } from "@modelcontextprotocol/server";
import { DurableObject } from "cloudflare:workers";
import { McpServer as CopiedMcpServer } from "mcp-server-copy";
import { z } from "zod";
import { Lifecycle } from "../src/lifecycle";
import { McpHandler } from "../src/mcp";

/** Registers the `echo` tool every scenario serves. */
function withEcho<Server extends { registerTool: McpServer["registerTool"] }>(server: Server, name: string): Server {
  server.registerTool("echo", { description: "Echoes its text", inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: "text" as const, text: `${name}: ${text}` }],
  }));
  return server;
}

/** McpHandler with no options: the default Host and Origin rules. */
export class McpDefaults extends DurableObject {
  readonly mcp = new McpHandler({ server: () => withEcho(new McpServer({ name: "defaults", version: "1.0.0" }), "defaults") });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);
}

/** A deployed same-origin app: the one-line allowance for its own hostname. */
export class McpSameOrigin extends DurableObject {
  readonly mcp = new McpHandler({
    server: () => withEcho(new McpServer({ name: "same-origin", version: "1.0.0" }), "same-origin"),
    allowedHosts: ["myapp.example.com"],
  });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);
}

/** A factory returning an McpServer from another copy of `@modelcontextprotocol/server` (npm alias `mcp-server-copy`). */
export class McpCopiedSdk extends DurableObject {
  readonly mcp = new McpHandler({
    // SAFETY: the copy is the same API at another version; its classes are not this copy's, which is the point.
    server: () => withEcho(new CopiedMcpServer({ name: "copied-sdk", version: "1.0.0" }), "copied-sdk") as unknown as McpServer,
  });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);
}
