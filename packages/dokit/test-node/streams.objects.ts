// Scenario object for dokit/streams over real loopback sockets (streams.test.ts): SSE with a
// real EventSource client, the dokit client's stream reader, the official client beside them.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../src/lifecycle";
import { sseResponse, Streams } from "../src/streams";
import { type Connection, WebSockets } from "../src/websockets";
import { evictRoute } from "./evict.route";

declare global {
  interface Env {
    StreamsLog: DurableObjectNamespace<StreamsLog>;
  }
}

/**
 * A job log. HTTP below the object's path: `POST append?stream=<id>` (body: one JSON chunk),
 * `POST settle?stream=<id>&how=close|error|discard`, `GET sse/<id>` (the stream as SSE).
 * Text messages: `kick` closes the sender with 1012 (its client reconnects); others echo back.
 */
export class StreamsLog extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets({
    handlers: {
      onMessage: (connection: Connection, message: string | ArrayBuffer) => {
        if (message === "kick") return connection.close(1012, "kicked");
        connection.send(`echo:${String(message)}`);
      },
    },
  });
  readonly streams = new Streams({ webSockets: this.webSockets });
  readonly lifecycle = Lifecycle.install(this).use(this.streams);

  async onRequest(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const stream = url.searchParams.get("stream") ?? "";
    const [action, id] = url.pathname.split("/").slice(-2);
    if (action === "sse") return sseResponse(this.streams, decodeURIComponent(id ?? ""), { request, heartbeatMs: 1000 });
    if (id === "append" && request.method === "POST") {
      const writer = await this.streams.open(stream);
      return Response.json({ seq: writer.append(await request.json()) });
    }
    if (id === "settle" && request.method === "POST") {
      const writer = await this.streams.open(stream);
      const how = url.searchParams.get("how");
      if (how === "error") writer.error("producer failed");
      else writer.close({ discard: how === "discard" });
      return new Response("settled");
    }
    return new Response("no route", { status: 404 });
  }
}

/** Test-only: `POST /evict-streams-log/<name>` evicts that StreamsLog (evict.route.ts). */
export function streamsEvictRoute(request: Request, env: Env): Promise<Response | undefined> | undefined {
  const url = new URL(request.url);
  if (!url.pathname.startsWith("/evict-streams-log/")) return undefined;
  url.pathname = url.pathname.replace("/evict-streams-log/", "/evict/");
  return evictRoute(new Request(url, request), env.StreamsLog);
}
