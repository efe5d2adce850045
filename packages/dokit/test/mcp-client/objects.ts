import { acceptedContent, inputRequired, inputResponse, McpServer } from "@modelcontextprotocol/server";
import { DurableObject, exports } from "cloudflare:workers";
import { z } from "zod";
import { getCurrentAgent, Lifecycle } from "../../src/lifecycle";
import { McpHandler } from "../../src/mcp";
import { McpClients } from "../../src/mcp-client";
import type { AddServerOptions } from "../../src/mcp-client";
import { WebSockets } from "../../src/websockets";
import { Observability } from "../../src/observability";

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

/**
 * Sends every MCP request of a client object to this worker's own default export (a
 * loopback through routing, as a request from the internet would arrive), except hosts
 * outside `.test`, which go to the real network.
 */
export function loopbackFetch(url: string | URL, init?: RequestInit): Promise<Response> {
  const target = new URL(String(url));
  // An address nothing answers at (the Node project tests a real closed port over loopback).
  if (target.hostname === "unreachable.test") return Promise.reject(new TypeError("Network connection lost."));
  if (!target.hostname.endsWith(".test")) return fetch(target, init);
  // SAFETY: the worker's default export is its fetch handler.
  const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
  return worker.fetch(new Request(target, init));
}

/** An MCP server inside an object (McpHandler): a stored counter, a prompt, a resource, and a tool that grows the tool list. */
export class McpServerObject extends DurableObject<Env> {
  readonly mcp = new McpHandler<McpServerObject>({ server: ({ host }) => host.build() });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);

  #grown = false;

  async #count(): Promise<number> {
    return (await this.ctx.storage.get<number>("count")) ?? 0;
  }

  build(): McpServer {
    const server = new McpServer(
      { name: "counter", version: "1.0.0" },
      { capabilities: { tools: { listChanged: true } }, instructions: "Counts things." },
    );
    server.registerTool("add", { description: "Adds to the counter", inputSchema: z.object({ a: z.number() }) }, async ({ a }) => {
      const total = (await this.#count()) + a;
      await this.ctx.storage.put("count", total);
      return text(`total ${total}`);
    });
    server.registerTool("get", { description: "Reads the counter" }, async () => text(`total ${await this.#count()}`));
    server.registerTool("key", { description: "Shows the x-api-key header the client sent" }, async () =>
      text(getCurrentAgent().request?.headers.get("x-api-key") ?? "none"),
    );
    server.registerTool("grow", { description: "Adds a tool (the list changes)" }, async () => {
      this.#grown = true;
      await this.mcp.notify.toolsChanged();
      return text("grown");
    });
    if (this.#grown) server.registerTool("extra", { description: "Appears after grow" }, async () => text("extra"));
    // Form elicitation the 2026-07-28 way: an input_required result, fulfilled by the client and retried.
    server.registerTool("ask", { description: "Asks the user for an amount (form elicitation)" }, async (ctx) => {
      const answer = acceptedContent<{ amount: number }>(ctx.mcpReq.inputResponses, "amount");
      if (answer) return text(`amount ${answer.amount}`);
      return inputRequired({
        inputRequests: {
          amount: inputRequired.elicit({
            message: "By how much?",
            requestedSchema: { type: "object", properties: { amount: { type: "number" } }, required: ["amount"] },
          }),
        },
      });
    });
    // Sampling the 2026-07-28 way: the client's model answers inside the call.
    server.registerTool("summarize", { description: "Asks the client's model for a summary (sampling)" }, async (ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, "summary");
      if (answer.kind === "sampling") {
        const content = answer.result.content;
        return text(`model said: ${!Array.isArray(content) && content.type === "text" ? content.text : "?"}`);
      }
      return inputRequired({
        inputRequests: {
          summary: inputRequired.createMessage({ messages: [{ role: "user", content: { type: "text", text: "Summarize" } }], maxTokens: 50 }),
        },
      });
    });
    // An object named huge-…: a server with a tool list larger than McpClients keeps by default (500).
    if (this.ctx.id.name?.startsWith("huge-")) {
      for (let n = 0; n < 600; n++) server.registerTool(`tool-${n}`, { description: `Tool ${n}` }, async () => text(String(n)));
    }
    server.registerPrompt("greet", { description: "A greeting", argsSchema: z.object({ who: z.string() }) }, ({ who }) => ({
      messages: [{ role: "user", content: { type: "text", text: `Hello ${who}` } }],
    }));
    server.registerResource("readme", "memo://readme", { mimeType: "text/plain" }, async (uri) => ({
      contents: [{ uri: uri.href, text: "read me" }],
    }));
    return server;
  }
}

/**
 * The JSON the tests read back over DO RPC. SAFETY: the SDK's result types are too deep for the
 * RPC stub types; each test checks the values it reads.
 */
type Json = any;

/** What the tests call on a client object (DO RPC). */
abstract class ClientHost extends DurableObject<Env> {
  abstract readonly mcp: McpClients;
  abstract readonly lifecycle: Lifecycle;

  async add(name: string, url: string, options?: AddServerOptions): Promise<Json> {
    await this.lifecycle.start();
    return this.mcp.add(name, url, options);
  }
  /** add(), with a refusal returned rather than thrown (a rejected DO RPC is reported as unhandled by the pool). */
  async addError(name: string, url: string, options?: AddServerOptions) {
    await this.lifecycle.start();
    try {
      await this.mcp.add(name, url, options);
      return null;
    } catch (error) {
      return { code: (error as { code?: string }).code ?? null, message: (error as Error).message };
    }
  }
  async remove(id: string) {
    await this.lifecycle.start();
    return this.mcp.remove(id);
  }
  async servers(): Promise<Json> {
    await this.lifecycle.start();
    return this.mcp.servers();
  }
  async ready(): Promise<Json> {
    await this.lifecycle.start();
    await this.mcp.ready();
    return this.mcp.getMcpServers();
  }
  async catalogue(): Promise<Json> {
    await this.lifecycle.start();
    return { tools: this.mcp.tools(), prompts: this.mcp.prompts(), resources: this.mcp.resources() };
  }
  async state(): Promise<Json> {
    await this.lifecycle.start();
    return this.mcp.getMcpServers();
  }
  async callTool(serverId: string, name: string, args?: Record<string, unknown>): Promise<Json> {
    await this.lifecycle.start();
    return this.mcp.callTool(serverId, name, args);
  }
  async callToolError(serverId: string, name: string) {
    await this.lifecycle.start();
    try {
      await this.mcp.callTool(serverId, name, {});
      return null;
    } catch (error) {
      return { code: (error as { code?: string }).code ?? null, message: (error as Error).message };
    }
  }
  async readResource(serverId: string, uri: string): Promise<Json> {
    await this.lifecycle.start();
    return this.mcp.readResource(serverId, uri);
  }
  async getPrompt(serverId: string, name: string, args: Record<string, string>): Promise<Json> {
    await this.lifecycle.start();
    return this.mcp.getPrompt(serverId, name, args);
  }
  async storedRows() {
    return this.ctx.storage.sql.exec("SELECT id, name, url, tokens IS NOT NULL AS has_tokens FROM dokit_mcp_servers").toArray();
  }
  /** Replaces the stored access token with one the server rejects (an expired token, as far as the server knows). */
  async spoilAccessToken() {
    const row = this.ctx.storage.sql.exec<{ tokens: string }>("SELECT tokens FROM dokit_mcp_servers").one();
    const tokens = JSON.parse(row.tokens) as { access_token: string };
    this.ctx.storage.sql.exec("UPDATE dokit_mcp_servers SET tokens = ?", JSON.stringify({ ...tokens, access_token: "expired" }));
    return tokens.access_token;
  }
  /** Makes every pending authorization's `state` expired. */
  async expireStates() {
    this.ctx.storage.sql.exec("UPDATE dokit_mcp_servers SET state_expires = 1 WHERE oauth_state IS NOT NULL");
  }
  async accessToken() {
    return (JSON.parse(this.ctx.storage.sql.exec<{ tokens: string }>("SELECT tokens FROM dokit_mcp_servers").one().tokens) as { access_token: string }).access_token;
  }
  async tableExists() {
    return this.ctx.storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'dokit_mcp_servers'").toArray().length === 1;
  }
}

const isSensor = (request: Request) => new URL(request.url).searchParams.get("client") === "sensor";

/** An assistant: McpClients with WebSockets, so connections get cf_agent_mcp_servers (not sensor ones). */
export class Assistant extends ClientHost {
  readonly mcp = new McpClients({
    name: "assistant",
    version: "1.0.0",
    fetch: loopbackFetch,
    connectTimeoutMs: 2_000,
    // The host's answer to a server's question (a real host would ask its user, over a WebSocket).
    onElicitation: (serverId, request) => ({ action: "accept", content: { amount: serverId.length + (request.message === "By how much?" ? 0 : 100) } }),
    onSampling: (serverId) => ({ role: "assistant", model: "test-model", content: { type: "text", text: `short (for ${serverId})` } }),
  });
  readonly webSockets = new WebSockets({ protocol: (_connection, ctx) => !isSensor(ctx.request) });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp).use(this.webSockets).use(new Observability());
}

/** McpClients whose notification streams close after 300 ms without use, so the object may hibernate soon after a call. */
export class IdleAssistant extends ClientHost {
  readonly mcp = new McpClients({ name: "idle", version: "1.0.0", fetch: loopbackFetch, connectTimeoutMs: 2_000, streamIdleMs: 300 });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);
}

/** Tight limits: a small catalogue, short timeouts, loopback allowed by an allowUrl option. */
export class TightAssistant extends ClientHost {
  readonly mcp = new McpClients({
    name: "tight",
    version: "1.0.0",
    fetch: loopbackFetch,
    connectTimeoutMs: 500,
    maxCatalogueSize: 2,
    // Only the test hosts, over http or https (replaces the default policy).
    allowUrl: (url) => url.hostname.endsWith(".test"),
    maxResponseBytes: 1024 * 1024,
  });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp).use(new Observability());
}

/** An assistant whose add() runs in a routed request (so the OAuth callback URL is known): POST {base}/add. */
export class OAuthAssistant extends ClientHost {
  readonly mcp = new McpClients({ name: "oauth-assistant", version: "1.0.0", fetch: loopbackFetch, connectTimeoutMs: 3_000, successRedirect: "https://app.test/done" });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);

  async onRequest(request: Request): Promise<Response> {
    const { name, url, id } = (await request.json()) as { name: string; url: string; id: string };
    return Response.json(await this.mcp.add(name, url, { id, transport: { listen: false } }));
  }
}

/** OAuth with both redirects configured: the callback sends the browser to the app's own pages. */
export class RedirectingAssistant extends ClientHost {
  readonly mcp = new McpClients({
    name: "redirecting-assistant",
    version: "1.0.0",
    fetch: loopbackFetch,
    connectTimeoutMs: 3_000,
    successRedirect: "https://app.test/connected",
    errorRedirect: "https://app.test/not-connected",
  });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);

  async onRequest(request: Request): Promise<Response> {
    const { name, url, id } = (await request.json()) as { name: string; url: string; id: string };
    return Response.json(await this.mcp.add(name, url, { id, transport: { listen: false } }));
  }
}

/** Reconnects its stored servers when it starts (connectOnStart), in the background. */
export class EagerAssistant extends ClientHost {
  readonly mcp = new McpClients({ name: "eager", version: "1.0.0", fetch: loopbackFetch, connectOnStart: true });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);

  /** Starts the object and touches nothing of McpClients. */
  async ping() {
    await this.lifecycle.start();
    return "pong";
  }
}
