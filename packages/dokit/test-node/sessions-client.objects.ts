// Scenario object for live session history over real sockets (sessions-client.test.ts).
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../src/lifecycle";
import { type SessionMessage, Sessions } from "../src/sessions";
import { WebSockets } from "../src/websockets";
import { evictRoute } from "./evict.route";

declare global {
  interface Env {
    SessionsChat: DurableObjectNamespace<SessionsChat>;
  }
}

/** Sessions with live history: `?role=writer` may write, others read; `?mode=view` is readonly; client messages up to 2 KiB. */
export class SessionsChat extends DurableObject<Env> {
  readonly sessions = new Sessions({
    maxClientMessageBytes: 2048,
    access: (connection) => (connection.uri && new URL(connection.uri).searchParams.get("role") === "writer" ? "write" : "read"),
  });
  readonly webSockets = new WebSockets({ readonly: (_connection, ctx) => new URL(ctx.request.url).searchParams.get("mode") === "view" });
  readonly lifecycle = Lifecycle.install(this).use(this.sessions).use(this.webSockets);

  async serverAppend(message: SessionMessage, parentId?: string | null): Promise<void> {
    await this.sessions.session().appendMessage(message, parentId === undefined ? {} : { parentId });
  }

  async ids(): Promise<string[]> {
    return (await this.sessions.session().getHistory()).map((message) => message.id);
  }
}

/**
 * Test-only: `POST /sessions-chat/<name>/append` (body: `{ message, parentId? }`) appends as server code;
 * `GET /sessions-chat/<name>/ids` lists the active path; `POST /evict-sessions-chat/<name>` evicts the object.
 */
export async function sessionsChatRoute(request: Request, env: Env): Promise<Response | undefined> {
  const url = new URL(request.url);
  if (url.pathname.startsWith("/evict-sessions-chat/")) {
    url.pathname = url.pathname.replace("/evict-sessions-chat/", "/evict/");
    return evictRoute(new Request(url, request), env.SessionsChat);
  }
  const [, root, name, action] = url.pathname.split("/");
  if (root !== "sessions-chat" || !name) return undefined;
  const stub = env.SessionsChat.getByName(name);
  if (action === "append" && request.method === "POST") {
    const { message, parentId } = (await request.json()) as { message: SessionMessage; parentId?: string | null };
    await stub.serverAppend(message, parentId);
    return new Response("ok");
  }
  if (action === "ids") return Response.json(await stub.ids());
  return undefined;
}
