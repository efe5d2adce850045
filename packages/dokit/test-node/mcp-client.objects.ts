// An object that is an MCP client, for the Node-side tests (mcp-client.test.ts):
// it reaches MCP servers over real loopback sockets. Plain HTTP routes stand in
// for the host's own API: POST /add, GET /state, POST /call.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../src/lifecycle";
import { McpClients } from "../src/mcp-client";
import { WebSockets } from "../src/websockets";

const isSensor = (request: Request) => new URL(request.url).searchParams.get("client") === "sensor";

/** McpClients with WebSockets; loopback and http are allowed because requests reach it at 127.0.0.1 (local development). */
export class McpAssistant extends DurableObject<Env> {
  readonly mcp = new McpClients({ name: "node-assistant", version: "1.0.0", connectTimeoutMs: 1_500 });
  readonly webSockets = new WebSockets({ protocol: (_connection, ctx) => !isSensor(ctx.request) });
  readonly lifecycle = Lifecycle.install(this).use(this.mcp).use(this.webSockets);

  async onRequest(request: Request): Promise<Response> {
    const action = new URL(request.url).pathname.split("/").pop();
    try {
      if (action === "add") {
        const { name, url, id, listen } = (await request.json()) as { name: string; url: string; id?: string; listen?: boolean };
        return Response.json(await this.mcp.add(name, url, { ...(id && { id }), transport: { listen: listen ?? false } }));
      }
      if (action === "state") return Response.json(this.mcp.getMcpServers());
      if (action === "ready") {
        await this.mcp.ready();
        return Response.json(this.mcp.getMcpServers());
      }
      if (action === "call") {
        const { serverId, name, args } = (await request.json()) as { serverId: string; name: string; args?: Record<string, unknown> };
        return Response.json(await this.mcp.callTool(serverId, name, args));
      }
      if (action === "remove") {
        const { id } = (await request.json()) as { id: string };
        return Response.json(await this.mcp.remove(id));
      }
      if (action === "restart") {
        // An eviction as a deploy or the runtime causes it: the next request meets a fresh instance.
        setTimeout(() => this.ctx.abort("restart for the test"), 10);
        return Response.json(true);
      }
    } catch (error) {
      return Response.json({ code: (error as { code?: string }).code ?? null, error: (error as Error).message }, { status: 400 });
    }
    return new Response("unknown action", { status: 404 });
  }
}
