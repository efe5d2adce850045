import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";
import { sseResponse, Streams, type StreamWriter } from "../../src/streams";

/** The JSON the tests send over RPC (a shallow type: the recursive StreamJson is too deep for RPC stub types). */
type Json = string | number | boolean | null | { [key: string]: string | number | null };
import { WebSockets } from "../../src/websockets";

/** The reference's first example, import paths changed; plus what the tests drive over RPC. */
export class ReportObject extends DurableObject<Env> {
  readonly streams = new Streams();
  readonly lifecycle = Lifecycle.install(this).use(this.streams);

  /** GET /sse/<id>: the stream as Server-Sent Events. */
  async onRequest(request: Request): Promise<Response> {
    const id = new URL(request.url).pathname.split("/").pop() ?? "";
    return sseResponse(this.streams, decodeURIComponent(id), { request, heartbeatMs: 50 });
  }

  /** Opens `id` (live) and appends `chunks`. @returns the cursors */
  async produce(id: string, chunks: Json[], settle?: "close" | "error"): Promise<number[]> {
    const writer = await this.streams.open(id);
    const seqs = chunks.map((chunk) => writer.append(chunk));
    if (settle === "close") writer.close();
    if (settle === "error") writer.error("boom");
    return seqs;
  }

  /** This instance's writer of the durability test's stream: one attempt per instance. */
  #writer: Promise<StreamWriter> | undefined;

  /** One append through this instance's writer (the durability test's producer). @returns its cursor */
  async appendOne(id: string, chunk: Json): Promise<number> {
    this.#writer ??= this.streams.open(id);
    return (await this.#writer).append(chunk);
  }

  /** @returns every stored chunk of `id` (a settled stream reads to its end) */
  async readAll(id: string, from = 0): Promise<{ seq: number; chunk: Json }[]> {
    const out: { seq: number; chunk: Json }[] = [];
    const controller = new AbortController();
    try {
      for await (const batch of this.streams.readBatches(id, { from, signal: controller.signal, onUpToDate: () => controller.abort() })) out.push(...(batch as { seq: number; chunk: Json }[])); // SAFETY: the tests append only Json values.
    } catch {
      // Aborted at the tail of a live stream.
    }
    return out;
  }

  /** Kills the instance (as a crash would): in-memory state is lost, storage is kept. */
  kill(): void {
    this.ctx.abort("test abort");
  }
}

/** A 64-byte chunk limit. */
export class SmallChunks extends DurableObject<Env> {
  readonly streams = new Streams({ maxChunkBytes: 64 });
  readonly lifecycle = Lifecycle.install(this).use(this.streams);
}

/** Retention: settled streams go after 60 s, and at most 2 are kept. */
export class RetainedStreams extends DurableObject<Env> {
  readonly streams = new Streams({ retention: { maxAgeMs: 60_000, maxCount: 2 } });
  readonly lifecycle = Lifecycle.install(this).use(this.streams);
}

/**
 * Streams read over the object's WebSockets. `?readonly=1` makes a readonly connection;
 * streams named `secret:*` may not be read by connections tagged `guest` (`?tag=guest`).
 */
export class LiveLog extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets({
    getConnectionTags: (_connection, ctx) => new URL(ctx.request.url).searchParams.getAll("tag"),
    readonly: (_connection, ctx) => new URL(ctx.request.url).searchParams.get("readonly") === "1",
  });
  readonly streams = new Streams({
    webSockets: this.webSockets,
    maxReadsPerConnection: 3,
    canRead: (connection, id) => !(id.startsWith("secret:") && connection.tags.includes("guest")),
  });
  readonly lifecycle = Lifecycle.install(this).use(this.streams);

  async open(id: string): Promise<void> {
    await this.lifecycle.start();
    await this.streams.open(id);
  }
  async append(id: string, chunk: Json): Promise<number> {
    await this.lifecycle.start();
    return (await this.streams.open(id)).append(chunk);
  }
  async settle(id: string, how: "close" | "error" | "discard"): Promise<void> {
    await this.lifecycle.start();
    const writer = await this.streams.open(id);
    if (how === "close") writer.close();
    else if (how === "error") writer.error("producer failed");
    else writer.close({ discard: true });
  }
  async remove(id: string): Promise<boolean> {
    return this.streams.delete(id);
  }
  readers(): number {
    return this.ctx.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM dokit_stream_readers").one().n;
  }
}
