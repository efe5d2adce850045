// Objects that are MCP clients with the default transport (a notification stream per
// server), for mcp-idle.test.ts: each reports an id chosen in its constructor, so a test
// sees whether the runtime evicted it (a new id) across a wait.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../src/lifecycle";
import { McpClients, type McpClientsOptions } from "../src/mcp-client";

/** The routes both objects answer: POST /add, POST /call, GET /instance, GET /awake, GET /state. */
abstract class IdleHost extends DurableObject<Env> {
  readonly instance = crypto.randomUUID();
  abstract readonly mcp: McpClients;

  async onRequest(request: Request): Promise<Response> {
    const action = new URL(request.url).pathname.split("/").pop();
    try {
      if (action === "add") {
        const { name, url, id } = (await request.json()) as { name: string; url: string; id: string };
        return Response.json(await this.mcp.add(name, url, { id }));
      }
      if (action === "call") {
        const { serverId, name, args } = (await request.json()) as { serverId: string; name: string; args?: Record<string, unknown> };
        return Response.json({ instance: this.instance, result: await this.mcp.callTool(serverId, name, args) });
      }
      if (action === "instance") return Response.json({ instance: this.instance });
      if (action === "awake") return Response.json({ instance: this.instance, keepsAwake: this.mcp.keepsAwake(), servers: this.mcp.servers() });
    } catch (error) {
      return Response.json({ code: (error as { code?: string }).code ?? null, error: (error as Error).message }, { status: 400 });
    }
    return new Response("unknown action", { status: 404 });
  }
}

const options = (extra: Partial<McpClientsOptions> = {}): McpClientsOptions => ({ name: "idle-host", version: "1.0.0", connectTimeoutMs: 2_000, ...extra });

/** McpClients with every default (streams close after 30 s without use). */
export class McpIdleDefault extends IdleHost {
  readonly mcp = new McpClients(options());
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);
}

/** McpClients whose streams close after 1 s without use. */
export class McpIdleShort extends IdleHost {
  readonly mcp = new McpClients(options({ streamIdleMs: 1_000 }));
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);
}

/** McpClients that keeps its streams open (`streamIdleMs: Infinity`): it never hibernates while a server is connected. */
export class McpIdleNever extends IdleHost {
  readonly mcp = new McpClients(options({ streamIdleMs: Number.POSITIVE_INFINITY }));
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);
}
