// Two objects doing the same stream work: DokitStreams on dokit/streams, RefStreams on npm
// agents@0.32.0's agents/streams. Each counts the rows its SQL statements write (every
// `ctx.storage.sql.exec` of the object goes through a counting wrapper installed before the
// capability is built). Routes, below `/{dokit|ref}/{name}/`:
//   append?n=<chunks>&bytes=<chunk size>  appends n chunks of a string of that size to stream "s" in one call;
//                                         answers the rows written meanwhile
//   close                                 closes stream "s"
//   sse                                   stream "s" as Server-Sent Events, from 0
//   ping                                  nothing (the round trip the bench subtracts)
//   tail?bytes=<chunk size>               appends one chunk to stream "t" (live tail: every reader is sent it)
//   (an upgrade)                          a reader: dokit's read stream "t" with dokit_stream_read;
//                                         RawTail's sockets all receive every chunk
// RawTail (`/raw/…`) is the floor of the live tail: the hibernation API, one INSERT per chunk into
// its own table, and the same frame dokit sends, built once and sent to every socket by hand.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle as RefLifecycle } from "agents/lifecycle";
import { sseResponse as refSseResponse, Streams as RefStreamsCapability } from "agents/streams";
import { Lifecycle } from "dokit/lifecycle";
import { sseResponse, Streams } from "dokit/streams";
import { WebSockets } from "dokit/websockets";
import { countRows } from "../lib/rows";

interface Env {
  DOKIT_STREAMS: DurableObjectNamespace<DokitStreams>;
  REF_STREAMS: DurableObjectNamespace<RefStreams>;
  RAW_TAIL: DurableObjectNamespace<RawTail>;
}

type Writer = { append(chunk: string): number; close(): void };
type Capability = { open(id: string): Promise<Writer> };

const tailWriters = new WeakMap<Capability, Writer>();

async function handle(request: Request, rows: { written(): number }, streams: Capability, sse: () => Promise<Response>): Promise<Response> {
  const url = new URL(request.url);
  const action = url.pathname.split("/").pop();
  if (action === "append") {
    const n = Number(url.searchParams.get("n"));
    const chunk = "x".repeat(Number(url.searchParams.get("bytes")) - 2); // the JSON string's quotes
    rows.written();
    const writer = await streams.open("s");
    for (let i = 0; i < n; i++) writer.append(chunk);
    return Response.json(rows.written());
  }
  if (action === "close") {
    (await streams.open("s")).close();
    return Response.json(null);
  }
  if (action === "sse") return sse();
  if (action === "tail") {
    // One writer per instance, as a producer holds it (a reopen per chunk would write the fence's row each time).
    let writer = tailWriters.get(streams);
    if (!writer) tailWriters.set(streams, (writer = await streams.open("t")));
    return Response.json(writer.append("x".repeat(Number(url.searchParams.get("bytes")) - 2)));
  }
  return Response.json(null);
}

export class DokitStreams extends DurableObject<Env> {
  readonly rows = countRows(this.ctx.storage.sql);
  readonly webSockets: WebSockets = new WebSockets();
  readonly streams = new Streams({ webSockets: this.webSockets, maxReadsPerConnection: 1 });
  readonly lifecycle = Lifecycle.install(this).use(this.streams);
  async onRequest(request: Request): Promise<Response> {
    return handle(request, this.rows, this.streams, () => sseResponse(this.streams, "s", { request, from: 0 }));
  }
}

export class RefStreams extends DurableObject<Env> {
  readonly rows = countRows(this.ctx.storage.sql);
  readonly streams = new RefStreamsCapability();
  readonly lifecycle = RefLifecycle.install(this).use(this.streams);
  async onRequest(request: Request): Promise<Response> {
    return handle(request, this.rows, this.streams, () => refSseResponse(this.streams, "s", { request, from: 0 }));
  }
}

export class RawTail extends DurableObject<Env> {
  #ready = false;
  #seq = -1;

  async fetch(request: Request): Promise<Response> {
    const sql = this.ctx.storage.sql;
    if (!this.#ready) {
      sql.exec("CREATE TABLE IF NOT EXISTS chunks (seq INTEGER PRIMARY KEY, body TEXT NOT NULL)");
      this.#seq = sql.exec<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM chunks").one().seq ?? -1;
      this.#ready = true;
    }
    if (request.headers.get("Upgrade") === "websocket") {
      const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
      this.ctx.acceptWebSocket(server);
      return new Response(null, { status: 101, webSocket: client });
    }
    const url = new URL(request.url);
    if (url.pathname.endsWith("/tail")) {
      const json = JSON.stringify("x".repeat(Number(url.searchParams.get("bytes")) - 2));
      const seq = ++this.#seq;
      sql.exec("INSERT INTO chunks (seq, body) VALUES (?, ?)", seq, json);
      const frame = `{"type":"dokit_stream","stream":"t","chunks":[{"seq":${seq},"chunk":${json}}]}`;
      for (const ws of this.ctx.getWebSockets()) {
        try {
          ws.send(frame);
        } catch {
          // closed meanwhile
        }
      }
      return Response.json(seq);
    }
    return Response.json(null);
  }

  webSocketMessage(): void {}
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const [, impl, name] = new URL(request.url).pathname.split("/");
    const namespace = impl === "dokit" ? env.DOKIT_STREAMS : impl === "ref" ? env.REF_STREAMS : impl === "raw" ? env.RAW_TAIL : undefined;
    if (!namespace || !name) return new Response("/{dokit|ref}/{name}/{action}", { status: 404 });
    // SAFETY: every namespace's objects answer fetch; the union of stub types does not show it.
    return (namespace as DurableObjectNamespace<DokitStreams>).getByName(name).fetch(request);
  },
} satisfies ExportedHandler<Env>;
