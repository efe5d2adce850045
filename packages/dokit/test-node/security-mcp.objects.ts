// MCP servers for security-mcp.test.ts: session bounds, sessions bound to
// their user, events over SQLite's 2 MB row limit. Reached over loopback at
// /agents/<kebab binding>/<name>/mcp, or /authed/... with props from the
// test's `x-test-user` header (security-mcp.route.ts). Each object answers
// GET .../rows with how many session, event and event-part rows it stores.
import { McpServer } from "@modelcontextprotocol/server";
import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { Lifecycle } from "../src/lifecycle";
import { McpHandler } from "../src/mcp";
import type { McpHandlerOptions } from "../src/mcp";

/** A server with `echo` and `big` (a text result of `bytes` bytes, after `delayMs`). */
function server(name: string): McpServer {
  const built = new McpServer({ name, version: "1.0.0" }, { capabilities: { resources: { subscribe: true } } });
  built.registerTool("echo", { description: "Echoes its text", inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: "text" as const, text: `${name}: ${text}` }],
  }));
  built.registerTool(
    "big",
    { description: "A large text result", inputSchema: z.object({ bytes: z.number(), delayMs: z.number().optional() }) },
    async ({ bytes, delayMs }) => {
      if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
      return { content: [{ type: "text" as const, text: "x".repeat(bytes) }] };
    },
  );
  return built;
}

/** Counts the rows McpHandler keeps (tables it has not made yet count 0). */
function rows(sql: SqlStorage): Response {
  const count = (table: string) => {
    const exists = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?", table).one().n;
    return exists ? sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).one().n : 0;
  };
  return Response.json({
    sessions: count("_dokit_mcp_sessions"),
    events: count("_dokit_mcp_events"),
    parts: count("_dokit_mcp_event_parts"),
  });
}

/** A scenario object: McpHandler with the given options, and the rows route. */
function scenario(name: string, options: Omit<McpHandlerOptions, "server"> = {}) {
  return class extends DurableObject {
    readonly mcp = new McpHandler({ server: () => server(name), onError: () => {}, ...options });
    readonly lifecycle = Lifecycle.install(this).use(this.mcp);
    onRequest(): Response {
      return rows(this.ctx.storage.sql);
    }
  };
}

/** Default options: the default bounds and the default session owner (a digest of the props). */
export class McpGuarded extends scenario("guarded") {}
/** At most three sessions. */
export class McpFewSessions extends scenario("few", { maxSessions: 3 }) {}
/** Sessions idle for a second expire. */
export class McpBriefSessions extends scenario("brief", { sessionTtlMs: 1000 }) {}
/** Sessions owned by the props' `user` alone (props also carry a per-request token). */
export class McpUserSessions extends scenario("user", {
  sessionOwner: (props) => (typeof props?.user === "string" ? props.user : undefined),
}) {}
