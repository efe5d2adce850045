import { DurableObject, exports, RpcTarget } from "cloudflare:workers";
import { z } from "zod";
import { Callables } from "dokit/callables";
import { Inspector } from "dokit/inspector";
import { getCurrentAgent, Lifecycle } from "dokit/lifecycle";
import { McpClients } from "dokit/mcp-client";
import { Observability } from "dokit/observability";
import { WebSockets } from "dokit/websockets";
import type { AddedServer, AssistantApi, ToolResult } from "./api";

/** Where the object keeps the origins this Worker was reached at (sync KV of the object's SQLite storage). */
const OWN_ORIGINS = "assistant:own-origins";
const MAX_OWN_ORIGINS = 8;

/** What the page calls. Arguments are checked by the schemas below before a method runs. */
export class AssistantCallables extends RpcTarget implements AssistantApi {
  readonly #assistant: Assistant;

  constructor(assistant: Assistant) {
    super();
    this.#assistant = assistant;
  }

  addServer(url: string, name?: string): Promise<AddedServer> {
    return this.#assistant.addServer(url, name);
  }

  removeServer(id: string): Promise<boolean> {
    return this.#assistant.mcp.remove(id);
  }

  async callTool(serverId: string, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
    return (await this.#assistant.mcp.callTool(serverId, name, args)) as ToolResult;
  }
}

/**
 * An assistant that uses remote MCP servers on behalf of its users: McpClients
 * keeps the servers (and any OAuth tokens) in the object's SQLite storage and
 * sends every browser the live server list and tools as `cf_agent_mcp_servers`;
 * the page adds servers and calls tools through callables. A real assistant
 * would hand `this.mcp.tools()` to a model and run the calls it asks for.
 */
export class Assistant extends DurableObject<Env> {
  readonly mcp = new McpClients({
    name: "dokit-assistant",
    version: "1.0.0",
    // Default URL policy: https to public hosts; also http and loopback in local development.
    fetch: (url, init) => this.#fetch(url, init),
  });
  readonly callables = new Callables(new AssistantCallables(this), {
    args: {
      addServer: { url: z.url({ protocol: /^https?$/ }).max(2000), name: z.string().trim().min(1).max(64).optional() },
      removeServer: { id: z.string().max(64) },
      callTool: { serverId: z.string().max(64), name: z.string().min(1).max(128), args: z.record(z.string(), z.unknown()).optional() },
    },
  });
  readonly webSockets = new WebSockets({ callables: this.callables });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp).use(this.callables).use(this.webSockets)
    // The live inspector at /agents/assistant/{name}/__dokit (localhost only: docs/inspector.md).
    .use(new Inspector({ enabled: true, observability: new Observability(), webSockets: this.webSockets, mcpClients: this.mcp }));

  /**
   * Adds a server under an id derived from its URL, so adding the same URL again
   * reconnects it (a retry after `failed`) rather than listing it twice.
   */
  async addServer(url: string, name?: string): Promise<AddedServer> {
    this.#rememberOwnOrigin();
    const id = await idOf(url);
    // A known server keeps its name (McpClients refuses one id for two names).
    const known = this.mcp.servers().find((server) => server.id === id);
    const label = known?.name ?? name ?? new URL(url).host;
    // No standing notification stream: the object can hibernate while connected (the counter's tools never change).
    return this.mcp.add(label, url, { id, transport: { listen: false } });
  }

  // ------------------------------------------------------------------ fetch

  /**
   * The fetch McpClients uses. A server on one of this Worker's own origins (the
   * mcp-counter, under `pnpm dev` and in the tests) is this Worker: the request goes
   * through its own entrypoint (`ctx.exports`, as `exports` from `cloudflare:workers`)
   * instead of out to the network and back. Everything else is a normal fetch.
   */
  #fetch(url: string | URL, init?: RequestInit): Promise<Response> {
    const target = new URL(String(url));
    if (!this.#ownOrigins().includes(target.origin)) return fetch(target, init);
    // SAFETY: the Worker's default export is its fetch handler (examples/index.ts, or this example's src/index.ts).
    const self = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
    return self.fetch(new Request(target, init));
  }

  #ownOrigins(): string[] {
    return this.ctx.storage.kv.get<string[]>(OWN_ORIGINS) ?? [];
  }

  /** Records the origin the calling page reached this object at (its WebSocket upgrade URL). */
  #rememberOwnOrigin(): void {
    const { request, connection } = getCurrentAgent();
    const address = request?.url ?? connection?.uri;
    if (!address) return;
    const origin = new URL(address).origin;
    const known = this.#ownOrigins();
    if (!known.includes(origin)) this.ctx.storage.kv.put(OWN_ORIGINS, [origin, ...known].slice(0, MAX_OWN_ORIGINS));
  }
}

/** @returns a stable server id for `url`: 16 hex digits of its SHA-256 */
async function idOf(url: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(new URL(url).href));
  return [...new Uint8Array(digest).slice(0, 8)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
