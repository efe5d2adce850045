import { McpServer } from "@modelcontextprotocol/server";
import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { Inspector } from "dokit/inspector";
import { Lifecycle } from "dokit/lifecycle";
import { McpHandler } from "dokit/mcp";
import { Observability } from "dokit/observability";
import { State } from "dokit/state";
import { WebSockets } from "dokit/websockets";
import type { CounterState } from "./api";

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });
const COUNT_URI = "counter://count";

/**
 * A counter that an AI model changes through MCP tools while people watch it
 * live: the MCP server and the WebSocket clients share one State. Each object
 * name is its own MCP server: `/agents/mcp-counter/{name}/mcp`.
 */
export class McpCounter extends DurableObject<Env> {
  readonly counter = new State<CounterState>({
    initialState: { count: 0, last: null },
    // Browsers (useAgent, AgentClient) get each change from the WebSockets it is synced through.
    onChanged: () => void this.mcp.notify.resourceUpdated(COUNT_URI), // MCP clients subscribed to the resource
  });
  // Watchers only: the count changes through tools, never through a client's setState.
  readonly webSockets: WebSockets = new WebSockets({ state: this.counter, readonly: () => true });
  readonly mcp = new McpHandler<McpCounter>({ server: () => this.buildServer() });
  readonly lifecycle = Lifecycle.install(this).use(this.counter).use(this.mcp).use(this.webSockets)
    // The live inspector at /agents/mcp-counter/{name}/__dokit (localhost only: docs/inspector.md).
    .use(new Inspector({ enabled: true, observability: new Observability(), webSockets: this.webSockets, state: this.counter, mcp: this.mcp }));

  /** A fresh server for each modern request and each 2025-era session (the handler never shares one). */
  buildServer(): McpServer {
    const server = new McpServer(
      { name: "dokit-mcp-counter", version: "1.0.0" },
      { capabilities: { resources: { subscribe: true } } },
    );
    server.registerTool(
      "increment",
      {
        description: "Adds to the shared counter that people are watching live, and returns the new count",
        inputSchema: z.object({ by: z.number().int().min(1).max(100).default(1).describe("How much to add (1–100)") }),
      },
      async ({ by }) => {
        const { count } = this.counter.set({ count: this.counter.get().count + by, last: { by, at: Date.now() } });
        return text(`The count is now ${count}.`);
      },
    );
    server.registerTool("get_count", { description: "Reads the shared counter" }, async () =>
      text(`The count is ${this.counter.get().count}.`),
    );
    server.registerResource("count", COUNT_URI, { mimeType: "text/plain", description: "The current count" }, async (uri) => ({
      contents: [{ uri: uri.href, text: String(this.counter.get().count) }],
    }));
    return server;
  }
}
