// Objects for security-mcp-client.test.ts: McpClients reached over real loopback
// sockets, by HTTP routes (POST /add, GET /state) and by WebSocket callables.
import { DurableObject, RpcTarget } from "cloudflare:workers";
import { Lifecycle } from "../src/lifecycle";
import { McpClients } from "../src/mcp-client";
import type { AddServerOptions } from "../src/mcp-client";
import { WebSockets } from "../src/websockets";

const isViewer = (request: Request) => new URL(request.url).searchParams.get("mode") === "view";

/** What a page may call: add a server, read the list. */
export class GuardedCallables extends RpcTarget {
  readonly #mcp: McpClients;
  constructor(mcp: McpClients) {
    super();
    this.#mcp = mcp;
  }
  /** @returns what `add()` returns */
  add(name: string, url: string, options?: AddServerOptions) {
    return this.#mcp.add(name, url, options);
  }
}

/** Answers POST /add ({ name, url, id, headers }) and GET /state; errors as 400 with their code. */
async function serveRoutes(mcp: McpClients, request: Request): Promise<Response> {
  const action = new URL(request.url).pathname.split("/").pop();
  try {
    if (action === "add") {
      const { name, url, id, headers } = (await request.json()) as { name: string; url: string; id?: string; headers?: Record<string, string> };
      return Response.json(await mcp.add(name, url, { ...(id && { id }), ...(headers && { headers }), transport: { listen: false } }));
    }
    if (action === "state") return Response.json(mcp.getMcpServers());
  } catch (error) {
    return Response.json({ code: (error as { code?: string }).code ?? null, error: (error as Error).message }, { status: 400 });
  }
  return new Response("unknown action", { status: 404 });
}

/** McpClients with the default policy (local development decided per call), WebSockets with `?mode=view` readonly viewers. */
export class McpClientGuarded extends DurableObject<Env> {
  readonly mcp = new McpClients({ name: "guarded", version: "1.0.0", connectTimeoutMs: 2_000 });
  readonly webSockets = new WebSockets({ callables: new GuardedCallables(this.mcp), readonly: (_connection, ctx) => isViewer(ctx.request) });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp).use(this.webSockets);

  onRequest(request: Request): Promise<Response> {
    return serveRoutes(this.mcp, request);
  }
}

/** McpClients as deployed: never local development, whatever host the request was addressed to. */
export class McpDeployed extends DurableObject<Env> {
  readonly mcp = new McpClients({ name: "deployed", version: "1.0.0", connectTimeoutMs: 2_000, localDevelopment: false });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);

  onRequest(request: Request): Promise<Response> {
    return serveRoutes(this.mcp, request);
  }
}
