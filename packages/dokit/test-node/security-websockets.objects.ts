// Scenario objects for the WebSocket and Inspector security tests over real
// sockets (security-websockets.test.ts).
import { DurableObject } from "cloudflare:workers";
import { Inspector } from "../src/inspector";
import { Lifecycle } from "../src/lifecycle";
import { Observability } from "../src/observability";
import { WebSockets } from "../src/websockets";
import { evictRoute } from "./evict.route";

declare global {
  interface Env {
    IdRoom: DurableObjectNamespace<IdRoom>;
    IdRoomQueries: DurableObjectNamespace<IdRoomQueries>;
  }
}

/**
 * A room whose connections carry `role:<role>` from `?role=`. Test routes:
 * `GET …/ids?tag=` (ids of `getConnections(tag)`), `GET …/lookup?id=` (`getConnection(id)`'s id
 * and tags), `POST …/broadcast?tag=&except=` (body sent with `broadcast`), `GET …/closes` (what
 * `onClose` saw). The Inspector is on with its default guard (loopback Host).
 */
export class IdRoom extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets({
    getConnectionTags: (_connection, ctx) => {
      const role = new URL(ctx.request.url).searchParams.get("role");
      return role ? [`role:${role}`] : [];
    },
    handlers: {
      onConnect: (connection) => connection.send(JSON.stringify({ type: "welcome", id: connection.id, tags: connection.tags })),
      onClose: (connection, code) => this.#logClose(connection.id, code),
    },
  });
  readonly lifecycle = Lifecycle.install(this)
    .use(this.webSockets)
    .use(new Inspector({ enabled: true, observability: new Observability(), webSockets: this.webSockets, ...this.inspectorOptions() }));

  /** @returns extra Inspector options (none here) */
  inspectorOptions(): Record<string, unknown> {
    return {};
  }

  #logClose(id: string, code: number): void {
    const closes = this.ctx.storage.kv.get<string[]>("closes") ?? [];
    this.ctx.storage.kv.put("closes", [...closes, `${id}:${code}`]);
  }

  async onRequest(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const query = url.searchParams;
    const route = url.pathname.slice(url.pathname.lastIndexOf("/"));
    if (route === "/ids") return Response.json([...this.webSockets.getConnections(query.get("tag") ?? undefined)].map((c) => c.id));
    if (route === "/lookup") {
      const connection = this.webSockets.getConnection(query.get("id") ?? "");
      return Response.json(connection ? { id: connection.id, tags: connection.tags } : null);
    }
    if (route === "/broadcast" && request.method === "POST") {
      const body = await request.text();
      this.webSockets.broadcast(body, { tag: query.get("tag") ?? undefined, except: query.get("except") ?? undefined });
      return new Response("sent");
    }
    if (route === "/closes") return Response.json(this.ctx.storage.kv.get<string[]>("closes") ?? []);
    return new Response("no route", { status: 404 });
  }
}

/** The same room with an Inspector that shows query values (`showQueryValues: true`). */
export class IdRoomQueries extends IdRoom {
  override inspectorOptions(): Record<string, unknown> {
    return { showQueryValues: true };
  }
}

/** `POST /evict-id-room/<name>` evicts that IdRoom the way hibernation does. */
export function idRoomEvictRoute(request: Request, env: Env): Promise<Response | undefined> | undefined {
  const url = new URL(request.url);
  if (!url.pathname.startsWith("/evict-id-room/")) return undefined;
  url.pathname = url.pathname.replace("/evict-id-room/", "/evict/");
  return evictRoute(new Request(url, request), env.IdRoom);
}
