// The reference's documentation examples (agents@0.32.0 docs/streams.md), with only their import
// paths changed from `agents/*` to `dokit/*`: they must compile and run as written.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "dokit/lifecycle";
import { sseResponse, Streams } from "dokit/streams";

export class ReportObject extends DurableObject<Env> {
  readonly streams = new Streams();
  readonly lifecycle = Lifecycle.install(this).use(this.streams);

  async onRequest(request: Request) {
    return sseResponse(this.streams, "reply:123", { request });
  }

  /** "Producing", with the metadata and chunk it leaves to the reader. */
  async produce(metadata: Record<string, string>, chunk: { text: string }): Promise<void> {
    const stream = await this.streams.open("reply:123", { metadata });
    stream.append(chunk); // synchronous durable write; wakes live readers
    stream.close(); // or stream.error(reason)
  }

  /** "Consuming", then the status it reports. */
  async consume(from: number, signal?: AbortSignal): Promise<{ chunks: unknown[]; state: string | undefined }> {
    const chunks: unknown[] = [];
    for await (const chunk of this.streams.read("reply:123", { from, signal })) {
      // replays persisted chunks from `from`, then tails live appends,
      // ends when the stream settles
      chunks.push(chunk.chunk);
    }

    const status = await this.streams.status("reply:123");
    // { state: "streaming" | "completed" | "errored", cursor, ... } | null
    return { chunks, state: status?.state };
  }

  /** Batched reads, and the tag lookup. */
  async batches(from: number): Promise<number[]> {
    const sizes: number[] = [];
    const flush = (batch: unknown[]) => sizes.push(batch.length);
    for await (const batch of this.streams.readBatches("reply:123", {
      from,
      batchSize: 50, // per-array ceiling during replay; default 100
    })) {
      flush(batch); // StreamChunk[] — one write per backlog, not per chunk
    }
    return sizes;
  }

  /** The cutover, with a synchronous message write standing in for a Session's. */
  async cutover(): Promise<{ messages: number; status: unknown }> {
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS messages (id TEXT PRIMARY KEY, body TEXT)");
    const sessionSync = { upsert: (message: { id: string; body: string }) => void this.ctx.storage.sql.exec("INSERT OR REPLACE INTO messages VALUES (?, ?)", message.id, message.body) };
    const message = { id: "m1", body: "the whole reply" };
    const stream = await this.streams.open("turn", { tag: "turn-1" });
    stream.append("the whole ");
    stream.append("reply");
    stream.close({
      commit: () => sessionSync.upsert(message), // synchronous writes only
      discard: true, // delete the stream's rows in the same transaction
    });
    const latest = await this.streams.list({ tag: "turn-1", limit: 1 });
    return { messages: this.ctx.storage.sql.exec("SELECT * FROM messages").toArray().length, status: latest[0] ?? null };
  }
}
