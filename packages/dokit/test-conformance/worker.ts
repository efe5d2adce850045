// The conformance worker: `/agents/everything/<name>/mcp` is the
// "everything" server (server.ts) inside a Durable Object, served by
// McpHandler with its default options; `retry-tuned` and `retry-off` differ
// only in the `retryMs` option.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../src/lifecycle";
import { McpHandler, type McpHandlerOptions } from "../src/mcp";
import { routeAgentRequest } from "../src/routing";
import { buildEverythingServer } from "./server";

/** @returns a handler serving the everything server, with `options` on top of the defaults */
function everything(self: { readonly mcp: McpHandler }, options: Omit<McpHandlerOptions, "server"> = {}): McpHandler {
  return new McpHandler({
    ...options,
    server: ({ era }) => buildEverythingServer({ era, resourceUpdated: (uri) => self.mcp.notify.resourceUpdated(uri) }),
  });
}

/** One MCP server per object name, with McpHandler's defaults. */
export class Everything extends DurableObject<Env> {
  readonly mcp: McpHandler = everything(this);
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);
}

/** The same server announcing a 250 ms reconnection delay. */
export class RetryTuned extends DurableObject<Env> {
  readonly mcp: McpHandler = everything(this, { retryMs: 250 });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);
}

/** The same server sending no `retry:` field. */
export class RetryOff extends DurableObject<Env> {
  readonly mcp: McpHandler = everything(this, { retryMs: false });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    return (await routeAgentRequest(request, env)) ?? new Response("no route", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
