import { fromJsonSchema, McpServer } from "@modelcontextprotocol/server";
import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { getCurrentAgent, Lifecycle } from "../../src/lifecycle";
import { McpHandler } from "../../src/mcp";
import { State } from "../../src/state";
import { WebSockets } from "../../src/websockets";
import { sleep } from "../helpers";

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

/** A counter kept in storage, served over MCP: the main scenario. */
export class McpCounter extends DurableObject<Env> {
  readonly mcp = new McpHandler<McpCounter>({ server: ({ host }) => host.buildServer() });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);

  async counter(): Promise<number> {
    return (await this.ctx.storage.get<number>("counter")) ?? 0;
  }

  buildServer(): McpServer {
    const server = new McpServer(
      { name: "counter", version: "1.0.0" },
      { capabilities: { resources: { subscribe: true, listChanged: true }, tools: { listChanged: true } } },
    );
    server.registerTool("add", { description: "Adds to the stored counter", inputSchema: z.object({ a: z.number() }) }, async ({ a }) => {
      const total = (await this.counter()) + a;
      await this.ctx.storage.put("counter", total);
      return text(`total ${total}`);
    });
    server.registerTool("get", { description: "Reads the stored counter" }, async () => text(`total ${await this.counter()}`));
    server.registerTool("whoami", { description: "Shows what the tool sees of its caller" }, async () => {
      const current = getCurrentAgent<McpCounter>();
      return text(
        JSON.stringify({
          user: current.props?.user ?? null,
          agentIsHost: current.agent === this,
          path: current.request ? new URL(current.request.url).pathname : null,
        }),
      );
    });
    server.registerTool(
      "echo",
      {
        description: "Answers with its input (repeated `repeat` times) after a delay",
        inputSchema: z.object({ text: z.string(), delayMs: z.number(), repeat: z.number().optional() }),
      },
      async ({ text: value, delayMs, repeat }) => {
        await sleep(delayMs);
        return text(value.repeat(repeat ?? 1));
      },
    );
    server.registerTool(
      "check",
      {
        description: "Validated by a plain JSON Schema (the SDK's cf-worker validator, no eval)",
        inputSchema: fromJsonSchema<{ n: number }>({
          type: "object",
          properties: { n: { type: "integer", minimum: 1 } },
          required: ["n"],
        }),
      },
      async ({ n }) => text(`ok ${n}`),
    );
    server.registerTool("fail", { description: "Throws" }, async () => {
      throw new Error("secret detail from the tool");
    });
    server.registerTool("confirm", { description: "Asks the user for an amount (form elicitation)" }, async (ctx) => {
      // relatedRequestId puts the request on this call's POST stream (without it, it goes to the GET stream).
      const result = await ctx.mcpReq.elicitInput(
        {
          mode: "form",
          message: "By how much?",
          requestedSchema: {
            type: "object",
            properties: { amount: { type: "number", title: "Amount", minimum: 1, maximum: 100 } },
            required: ["amount"],
          },
        },
        { relatedRequestId: ctx.mcpReq.id },
      );
      if (result.action !== "accept" || !result.content) return text("unchanged");
      const total = (await this.counter()) + Number(result.content.amount);
      await this.ctx.storage.put("counter", total);
      return text(`total ${total}`);
    });
    server.registerTool("connect-account", { description: "Sends the user to a page (URL elicitation)" }, async (ctx) => {
      const elicitationId = "e-1";
      const result = await ctx.mcpReq.elicitInput(
        { mode: "url", message: "Connect your account", url: `https://example.com/connect?elicitationId=${elicitationId}`, elicitationId },
        { relatedRequestId: ctx.mcpReq.id },
      );
      return text(`url ${result.action}`);
    });
    server.registerResource("counter", "counter://value", { mimeType: "text/plain" }, async (uri) => ({
      contents: [{ uri: uri.href, text: String(await this.counter()) }],
    }));
    return server;
  }

  /** Changes the object outside MCP, as a State onChanged would, and tells the clients. */
  async bump(by: number): Promise<number> {
    await this.lifecycle.start();
    const total = (await this.counter()) + by;
    await this.ctx.storage.put("counter", total);
    await this.mcp.notify.resourceUpdated("counter://value");
    await this.mcp.notify.toolsChanged();
    return total;
  }
}

/** Short keepalive, small body limit, an origin allowlist, a tiny event log. */
export class McpTuned extends DurableObject<Env> {
  readonly mcp = new McpHandler({
    server: () => {
      const server = new McpServer({ name: "tuned", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
      server.registerTool("ping", { description: "pong" }, async () => text("pong"));
      return server;
    },
    keepAliveMs: 50,
    maxRequestBodySize: 2048,
    allowedOrigins: ["app.example"],
    maxEventsPerStream: 3,
    cors: { maxAge: 600 },
    onError: () => {},
  });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);

  async toolsChanged(): Promise<void> {
    await this.lifecycle.start();
    await this.mcp.notify.toolsChanged();
  }
}

/** A factory that throws: the response must not carry its message or stack. */
export class McpBroken extends DurableObject<Env> {
  readonly mcp = new McpHandler({
    server: () => {
      throw new Error("secret detail: the database password is hunter2");
    },
    onError: () => {},
  });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);
}

/** McpHandler next to State and WebSockets: a tool changes the State, WebSocket clients see it live. */
export class McpStateCounter extends DurableObject<Env> {
  readonly counter = new State({
    initialState: { count: 0 },
    onChanged: () => void this.mcp.notify.resourceUpdated("counter://state"),
  });
  readonly webSockets: WebSockets = new WebSockets({ state: this.counter });
  readonly mcp: McpHandler = new McpHandler({
    server: () => {
      const server = new McpServer(
        { name: "state-counter", version: "1.0.0" },
        { capabilities: { resources: { subscribe: true, listChanged: true } } },
      );
      server.registerTool("increment", { description: "Adds one to the synced counter", inputSchema: z.object({ by: z.number().int().default(1) }) }, async ({ by }) => {
        const next = this.counter.set({ count: this.counter.get().count + by });
        return text(`count ${next.count}`);
      });
      server.registerResource("count", "counter://state", { mimeType: "application/json" }, async (uri) => ({
        contents: [{ uri: uri.href, text: JSON.stringify(this.counter.get()) }],
      }));
      return server;
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.counter).use(this.webSockets).use(this.mcp);
}
