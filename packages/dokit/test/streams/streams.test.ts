import { env, exports } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { isDokitError } from "../../src/lifecycle";
import { StreamClosedError, StreamNotFoundError, StreamSerializationError, Streams, type StreamChunk } from "../../src/streams";
import { fresh } from "../helpers";
import type { ReportObject } from "./objects";

const report = (label: string) => env.REPORT.getByName(fresh(label));
/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}
const blockRows = (instance: ReportObject, id: string) =>
  instance.lifecycle.ctx.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM dokit_stream_blocks WHERE stream = ?", id).one().n;

describe("Streams: writing", () => {
  it("appends synchronously and durably, each append returning the next cursor; open is idempotent on a live stream", async () => {
    await runInDurableObject(report("append"), async (instance) => {
      const writer = await instance.streams.open("reply:1", { metadata: { model: "m" }, tag: "turn-1" });
      expect(writer.cursor).toBe(0);
      expect(writer.append("a")).toBe(0);
      expect(writer.append({ b: [1, 2] })).toBe(1);
      expect(writer.cursor).toBe(2);
      const again = await instance.streams.open("reply:1");
      expect(again.cursor).toBe(2);
      expect(again.append(null)).toBe(2);
      const status = await instance.streams.status("reply:1");
      expect(status).toMatchObject({ streamId: "reply:1", state: "streaming", cursor: 3, tag: "turn-1", metadata: { model: "m" } });
      expect(status?.closedAt).toBeUndefined();
      expect(await instance.streams.status("nope")).toBeNull();
    });
  });

  it("keeps what was appended across a restart of the instance, and the cursor continues", async () => {
    const name = fresh("restart");
    expect(await env.REPORT.getByName(name).produce("s", ["x", "y"])).toEqual([0, 1]);
    await rejection(env.REPORT.getByName(name).kill());
    const stub = env.REPORT.getByName(name);
    expect(await stub.produce("s", ["z"])).toEqual([2]);
    expect((await stub.readAll("s")).map((c) => c.chunk)).toEqual(["x", "y", "z"]);
  });

  it("refuses to reopen a settled stream and to append to it; settling twice is a no-op", async () => {
    await runInDurableObject(report("closed"), async (instance) => {
      const writer = await instance.streams.open("s");
      writer.append(1);
      writer.close();
      writer.close();
      writer.error("late");
      expect(await instance.streams.status("s")).toMatchObject({ state: "completed", cursor: 1 });
      const reopen = await rejection(instance.streams.open("s"));
      expect(reopen).toBeInstanceOf(StreamClosedError);
      expect(reopen).toMatchObject({ code: "STREAM_CLOSED", streamId: "s", name: "StreamClosedError" });
      expect((reopen as Error).message).toMatch(/^dokit: /);
      expect(thrown(() => writer.append(2))).toBeInstanceOf(StreamClosedError);
      const failed = await instance.streams.open("e");
      failed.error("the model timed out");
      expect(await instance.streams.status("e")).toMatchObject({ state: "errored", cursor: 0, error: "the model timed out" });
    });
  });

  it("throws on reopening a live stream with another tag", async () => {
    await runInDurableObject(report("tag"), async (instance) => {
      await instance.streams.open("s", { tag: "a" });
      expect(await rejection(instance.streams.open("s", { tag: "b" }))).toMatchObject({ code: "TAG_CONFLICT" });
      await instance.streams.open("s", { tag: "a" });
      await instance.streams.open("s");
    });
  });

  it("refuses a chunk over maxChunkBytes, or one that is not JSON, and stores nothing", async () => {
    await runInDurableObject(env.SMALL.getByName(fresh("limit")), async (instance) => {
      const writer = await instance.streams.open("s");
      writer.append("ok");
      const big = thrown(() => writer.append("x".repeat(100)));
      expect(big).toBeInstanceOf(StreamSerializationError);
      expect((big as Error).message).toMatch(/over maxChunkBytes \(64\)/);
      // Multi-byte text is measured in UTF-8 bytes, not characters: 30 characters, 90 bytes.
      expect(thrown(() => writer.append("€".repeat(30)))).toBeInstanceOf(StreamSerializationError);
      expect(thrown(() => writer.append(undefined as never))).toBeInstanceOf(StreamSerializationError);
      expect(thrown(() => writer.append(10n as never))).toBeInstanceOf(StreamSerializationError);
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      expect(thrown(() => writer.append(cyclic as never))).toBeInstanceOf(StreamSerializationError);
      expect(writer.cursor).toBe(1);
      expect(writer.append("next")).toBe(1);
      expect(await rejection(instance.streams.open("m", { metadata: [] as never }))).toBeInstanceOf(StreamSerializationError);
      expect(await instance.streams.status("m")).toBeNull();
      expect(() => new Streams({ maxChunkBytes: 0 })).toThrow(/maxChunkBytes/);
      expect(() => new Streams({ maxChunkBytes: 2_000_000 })).toThrow(/maxChunkBytes/);
    });
  });

  it("stores chunks in rollover blocks: thousands of chunks are a handful of rows, read back in order", async () => {
    await runInDurableObject(report("blocks"), async (instance) => {
      const writer = await instance.streams.open("s");
      const text = "t".repeat(1000);
      for (let i = 0; i < 2000; i++) writer.append({ i, text });
      // 2,000 chunks of ~1 KB: about 2 MB of text in 256 KiB blocks.
      expect(blockRows(instance, "s")).toBeGreaterThanOrEqual(8);
      expect(blockRows(instance, "s")).toBeLessThanOrEqual(10);
      writer.close();
      const seqs: number[] = [];
      for await (const chunk of instance.streams.read("s", { from: 1500 })) {
        expect((chunk.chunk as { i: number }).i).toBe(chunk.seq);
        seqs.push(chunk.seq);
      }
      expect(seqs).toEqual(Array.from({ length: 500 }, (_, i) => 1500 + i));
    });
  });

  it("takes a chunk as large as the limit (1 MiB by default) in a block of its own", async () => {
    await runInDurableObject(report("large"), async (instance) => {
      const writer = await instance.streams.open("s");
      writer.append("small");
      const large = "L".repeat(1_048_576 - 2);
      expect(writer.append(large)).toBe(1);
      expect(thrown(() => writer.append(`${large}xx`))).toBeInstanceOf(StreamSerializationError);
      writer.append("after");
      writer.close();
      const chunks: StreamChunk[] = [];
      for await (const chunk of instance.streams.read("s")) chunks.push(chunk);
      expect(chunks.map((c) => (typeof c.chunk === "string" ? c.chunk.length : 0))).toEqual([5, 1_048_574, 5]);
    });
  });
});

describe("Streams: the cutover", () => {
  it("settles, runs commit and discards the stream's rows in one transaction", async () => {
    await runInDurableObject(report("cutover"), async (instance) => {
      const sql = instance.lifecycle.ctx.storage.sql;
      sql.exec("CREATE TABLE messages (id TEXT PRIMARY KEY, body TEXT)");
      const writer = await instance.streams.open("reply");
      writer.append("Hel");
      writer.append("lo");
      writer.close({ commit: () => void sql.exec("INSERT INTO messages VALUES ('m1', 'Hello')"), discard: true });
      expect(sql.exec("SELECT body FROM messages").toArray()).toEqual([{ body: "Hello" }]);
      expect(await instance.streams.status("reply")).toBeNull();
      expect(blockRows(instance, "reply")).toBe(0);
    });
  });

  it("rolls everything back when commit throws: no message, the stream still live with its chunks", async () => {
    await runInDurableObject(report("rollback"), async (instance) => {
      const sql = instance.lifecycle.ctx.storage.sql;
      sql.exec("CREATE TABLE messages (id TEXT PRIMARY KEY, body TEXT)");
      const writer = await instance.streams.open("reply");
      writer.append("partial");
      const failure = thrown(() =>
        writer.close({
          commit: () => {
            sql.exec("INSERT INTO messages VALUES ('m1', 'partial')");
            throw new Error("the message write failed");
          },
          discard: true,
        }),
      );
      expect((failure as Error).message).toBe("the message write failed");
      expect(sql.exec("SELECT * FROM messages").toArray()).toEqual([]);
      expect(await instance.streams.status("reply")).toMatchObject({ state: "streaming", cursor: 1 });
      // Still live: the producer carries on and settles for real.
      expect(writer.append("more")).toBe(1);
      writer.error("gave up", { commit: () => void sql.exec("INSERT INTO messages VALUES ('m1', 'failed')") });
      expect(await instance.streams.status("reply")).toMatchObject({ state: "errored", cursor: 2, error: "gave up" });
      expect(sql.exec("SELECT body FROM messages").toArray()).toEqual([{ body: "failed" }]);
    });
  });

  it("does not run commit when the stream is already settled or deleted", async () => {
    await runInDurableObject(report("commit-once"), async (instance) => {
      const writer = await instance.streams.open("s");
      let commits = 0;
      writer.close({ commit: () => commits++ });
      writer.close({ commit: () => commits++, discard: true });
      expect(commits).toBe(1);
      expect(await instance.streams.status("s")).toMatchObject({ state: "completed" });
    });
  });
});

describe("Streams: reading", () => {
  it("replays, then tails live appends, and ends when the stream settles; onUpToDate once at the tail", async () => {
    await runInDurableObject(report("tail"), async (instance) => {
      const writer = await instance.streams.open("s");
      writer.append("a");
      writer.append("b");
      const seen: StreamChunk[][] = [];
      let upToDate = 0;
      const reading = (async () => {
        for await (const batch of instance.streams.readBatches("s", { batchSize: 1, onUpToDate: () => upToDate++ })) seen.push(batch);
      })();
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(seen.map((b) => b.map((c) => c.chunk))).toEqual([["a"], ["b"]]);
      expect(upToDate).toBe(1);
      // Appends made together wake the reader once: a live tail yields what accumulated.
      writer.append("c");
      writer.append("d");
      await new Promise((resolve) => setTimeout(resolve, 10));
      writer.close();
      await reading;
      expect(seen.map((b) => b.map((c) => c.seq))).toEqual([[0], [1], [2, 3]]);
      expect(upToDate).toBe(1);
    });
  });

  it("reads a settled stream to its end (an errored one too), and from a cursor", async () => {
    await runInDurableObject(report("settled-read"), async (instance) => {
      const writer = await instance.streams.open("s");
      for (let i = 0; i < 5; i++) writer.append(i);
      writer.error("stopped");
      const chunks: StreamChunk[] = [];
      for await (const chunk of instance.streams.read("s", { from: 2 })) chunks.push(chunk);
      expect(chunks).toEqual([
        { seq: 2, chunk: 2 },
        { seq: 3, chunk: 3 },
        { seq: 4, chunk: 4 },
      ]);
      const atEnd: StreamChunk[] = [];
      for await (const chunk of instance.streams.read("s", { from: 5 })) atEnd.push(chunk);
      expect(atEnd).toEqual([]);
    });
  });

  it("answers a missing stream and a cursor past the end with clear errors, never a hang", async () => {
    await runInDurableObject(report("clear"), async (instance) => {
      const missing = await rejection(instance.streams.read("nope").next());
      expect(missing).toBeInstanceOf(StreamNotFoundError);
      expect(missing).toMatchObject({ code: "STREAM_NOT_FOUND" });
      const writer = await instance.streams.open("s");
      writer.append(1);
      const past = await rejection(instance.streams.read("s", { from: 2 }).next());
      expect(isDokitError(past, "CURSOR_PAST_END")).toBe(true);
      expect(await rejection(instance.streams.read("s", { from: -1 }).next())).toMatchObject({ code: "INVALID_ARGUMENT" });
    });
  });

  it("ends a tailing read when its signal aborts (throwing the reason), and when the stream is discarded", async () => {
    await runInDurableObject(report("abort"), async (instance) => {
      const writer = await instance.streams.open("s");
      writer.append(1);
      const controller = new AbortController();
      const got: number[] = [];
      const reading = (async () => {
        for await (const chunk of instance.streams.read("s", { signal: controller.signal })) got.push(chunk.seq);
      })();
      await new Promise((resolve) => setTimeout(resolve, 10));
      controller.abort(new Error("client left"));
      expect(((await rejection(reading)) as Error).message).toBe("client left");
      expect(got).toEqual([0]);
      expect(instance.streams.keepsAwake()).toEqual([]);

      const tailing = (async () => {
        const seen: number[] = [];
        for await (const chunk of instance.streams.read("s")) seen.push(chunk.seq);
        return seen;
      })();
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(instance.streams.keepsAwake()).toEqual(["streams: 1 in-object reader(s) tailing"]);
      writer.append(2);
      await new Promise((resolve) => setTimeout(resolve, 10));
      writer.append(3);
      writer.close({ discard: true });
      // A discard ends tailing readers at once: what they had not read yet went with the stream
      // (the cutover's commit holds the content now).
      expect(await tailing).toEqual([0, 1]);
    });
  });

  it("settlement races: appends and a close in one turn reach every reader; a second close and a late append lose cleanly", async () => {
    await runInDurableObject(report("race"), async (instance) => {
      const writer = await instance.streams.open("s");
      const readers = [0, 1, 2].map(async () => {
        const seen: number[] = [];
        for await (const chunk of instance.streams.read("s")) seen.push(chunk.seq);
        return seen;
      });
      await new Promise((resolve) => setTimeout(resolve, 10));
      for (let i = 0; i < 10; i++) writer.append(i);
      const other = await instance.streams.open("s");
      other.close();
      expect(thrown(() => other.append("late"))).toBeInstanceOf(StreamClosedError);
      writer.close();
      for (const seen of await Promise.all(readers)) expect(seen).toEqual([...Array(10).keys()]);
      // A reader started after settlement gets everything and ends.
      const after: number[] = [];
      for await (const chunk of instance.streams.read("s")) after.push(chunk.seq);
      expect(after).toHaveLength(10);
    });
  });
});

describe("Streams: status, list, delete", () => {
  it("lists newest first, by state and by tag, with a limit", async () => {
    await runInDurableObject(report("list"), async (instance) => {
      const a = await instance.streams.open("a", { tag: "turn" });
      a.append(1);
      a.close();
      const b = await instance.streams.open("b", { tag: "turn" });
      b.error("x");
      const c = await instance.streams.open("c");
      c.append(1);
      c.append(2);
      const ids = async (options?: Parameters<typeof instance.streams.list>[0]) => (await instance.streams.list(options)).map((s) => s.streamId);
      expect(await ids()).toEqual(["c", "b", "a"]);
      expect(await ids({ state: "streaming" })).toEqual(["c"]);
      expect(await ids({ state: ["completed", "errored"] })).toEqual(["b", "a"]);
      expect(await ids({ tag: "turn", limit: 1 })).toEqual(["b"]);
      expect((await instance.streams.list({ state: "streaming" }))[0]).toMatchObject({ cursor: 2 });
      expect((await instance.streams.list({ state: "completed" }))[0]).toMatchObject({ cursor: 1, closedAt: expect.any(Number) });
    });
  });

  it("deletes a settled stream and its chunks; refuses a live one; false for none", async () => {
    await runInDurableObject(report("delete"), async (instance) => {
      const writer = await instance.streams.open("s");
      writer.append("x");
      expect(await rejection(instance.streams.delete("s"))).toMatchObject({ code: "STREAM_LIVE" });
      writer.close();
      expect(await instance.streams.delete("s")).toBe(true);
      expect(await instance.streams.delete("s")).toBe(false);
      expect(await instance.streams.status("s")).toBeNull();
      expect(blockRows(instance, "s")).toBe(0);
      expect(await rejection(instance.streams.read("s").next())).toBeInstanceOf(StreamNotFoundError);
      // The id is free again: a new stream starts at cursor 0.
      expect((await instance.streams.open("s")).append("new")).toBe(0);
    });
  });
});

describe("Streams: producer fencing", () => {
  it("a writer belongs to the attempt that opened it: after a reopen the stale writer cannot append or settle", async () => {
    await runInDurableObject(report("fence"), async (instance) => {
      const first = await instance.streams.open("s");
      first.append("attempt 1");
      const second = await instance.streams.open("s");
      const stale = thrown(() => first.append("late from attempt 1"));
      expect(isDokitError(stale, "STALE_WRITER")).toBe(true);
      expect((stale as Error).message).toMatch(/earlier attempt/);
      expect(thrown(() => first.close())).toMatchObject({ code: "STALE_WRITER" });
      expect(second.append("attempt 2")).toBe(1);
      second.close();
      // Once settled, the stale writer's settle is the ordinary no-op.
      first.close();
      expect((await instance.readAll("s")).map((c) => c.chunk)).toEqual(["attempt 1", "attempt 2"]);
    });
  });

  it("the fence survives a restart: a writer opened after it takes over from the stored generation", async () => {
    const name = fresh("fence-restart");
    await env.REPORT.getByName(name).produce("s", ["a"]);
    await rejection(env.REPORT.getByName(name).kill());
    await runInDurableObject(env.REPORT.getByName(name), async (instance) => {
      const writer = await instance.streams.open("s");
      expect(writer.cursor).toBe(1);
      const newer = await instance.streams.open("s");
      expect(thrown(() => writer.append("b"))).toMatchObject({ code: "STALE_WRITER" });
      expect(newer.append("b")).toBe(1);
    });
  });
});

describe("Streams: retention", () => {
  it("sweeps settled streams by count and by age on the object's one alarm; live ones are never swept", async () => {
    const stub = env.RETAINED.getByName(fresh("retain"));
    await runInDurableObject(stub, async (instance) => {
      for (const id of ["a", "b", "c"]) (await instance.streams.open(id)).close();
      (await instance.streams.open("live")).append(1);
      // Arming the alarm runs after the settlement's synchronous block.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await instance.lifecycle.ctx.storage.getAlarm()).not.toBeNull();
    });
    // The count sweep is due at once: the alarm fires by itself.
    const ids = () => runInDurableObject(stub, async (instance) => (await instance.streams.list()).map((s) => s.streamId).sort());
    await vi.waitFor(async () => expect(await ids()).toEqual(["b", "c", "live"]), { timeout: 5000 });
    await runInDurableObject(stub, async (instance) => {
      // Age: pretend b and c settled two minutes ago; d settles now.
      instance.lifecycle.ctx.storage.sql.exec("UPDATE dokit_streams SET closed = closed - 120000 WHERE id IN ('b', 'c')");
      (await instance.streams.open("d")).close();
    });
    await vi.waitFor(async () => expect(await ids()).toEqual(["d", "live"]), { timeout: 5000 });
    await runInDurableObject(stub, async (instance) => {
      // d goes 60 s after it settled: the alarm stays armed for that.
      const at = (await instance.lifecycle.ctx.storage.getAlarm()) as number;
      expect(at).toBeGreaterThan(Date.now() + 50_000);
    });
    // Run early (as the test pool may), the sweep finds nothing due and re-arms for d.
    await runDurableObjectAlarm(stub);
    expect(await ids()).toEqual(["d", "live"]);
  });

  it("is off by default: no alarm is armed", async () => {
    await runInDurableObject(report("no-retain"), async (instance) => {
      (await instance.streams.open("a")).close();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await instance.lifecycle.ctx.storage.getAlarm()).toBeNull();
    });
  });
});

describe("Streams: Server-Sent Events", () => {
  // SAFETY: the test worker's default export is its fetch handler.
  const worker = (exports as unknown as { default: { fetch(input: Request | string, init?: RequestInit): Promise<Response> } }).default;
  const url = (name: string, id: string, query = "") => `http://example.com/agents/report/${name}/sse/${encodeURIComponent(id)}${query}`;

  /** Reads SSE events from a response body until `until` holds. */
  async function events(response: Response, until: (all: string) => boolean): Promise<string> {
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let all = "";
    while (!until(all)) {
      const { value, done } = await reader.read();
      if (done) break;
      all += decoder.decode(value, { stream: true });
    }
    await reader.cancel();
    return all;
  }

  it("sends each chunk with its cursor as id, up-to-date at the tail, heartbeats while idle, live appends, then done", async () => {
    const name = fresh("sse");
    const stub = env.REPORT.getByName(name);
    await stub.produce("s", ["a", { b: 1 }]);
    const response = await worker.fetch(url(name, "s"));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const body = events(response, (all) => all.includes("event: done"));
    await new Promise((resolve) => setTimeout(resolve, 150));
    await stub.produce("s", ["c"], "close");
    const text = await body;
    expect(text).toContain("id: 0\ndata: \"a\"\n\nid: 1\ndata: {\"b\":1}\n\nevent: up-to-date\ndata: {}\n\n");
    expect(text).toContain(": heartbeat\n\n");
    expect(text).toMatch(/id: 2\ndata: "c"\n\n(: heartbeat\n\n)*event: done\ndata: \{\}\n\n$/);
  });

  it("resumes after Last-Event-ID, or from ?from=; ends an errored stream with its reason", async () => {
    const name = fresh("sse-resume");
    const stub = env.REPORT.getByName(name);
    await stub.produce("s", ["a", "b", "c"], "error");
    const resumed = await events(await worker.fetch(new Request(url(name, "s"), { headers: { "Last-Event-ID": "0" } })), (all) => all.includes("event: error"));
    expect(resumed).toBe('id: 1\ndata: "b"\n\nid: 2\ndata: "c"\n\nevent: up-to-date\ndata: {}\n\nevent: error\ndata: {"reason":"boom"}\n\n');
    const from = await events(await worker.fetch(url(name, "s", "?from=2")), (all) => all.includes("event: error"));
    expect(from.startsWith('id: 2\ndata: "c"\n\n')).toBe(true);
  });

  it("answers a missing stream with 404, a resume point past the end with 416, a malformed one with 400", async () => {
    const name = fresh("sse-errors");
    await env.REPORT.getByName(name).produce("s", ["a"]);
    const missing = await worker.fetch(url(name, "nope"));
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe('dokit: stream "nope" does not exist');
    const past = await worker.fetch(new Request(url(name, "s"), { headers: { "Last-Event-ID": "5" } }));
    expect(past.status).toBe(416);
    await past.text();
    const bad = await worker.fetch(url(name, "s", "?from=x"));
    expect(bad.status).toBe(400);
    await bad.text();
  });
});
