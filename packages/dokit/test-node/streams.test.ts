// dokit/streams over real loopback sockets against the worker wrangler runs
// (streams.objects.ts): a real EventSource client (npm `eventsource`) resuming with
// Last-Event-ID across an eviction of the object; the dokit client's stream reader across a
// forced disconnect and an eviction; the official `agents` client connected beside them.
import { AgentClient as OfficialClient } from "agents/client";
import { EventSource } from "eventsource";
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, inject, it, onTestFinished, vi } from "vitest";
import { AgentClient } from "../src/client";
import type { AgentClientOptions, ClientStreamChunk } from "../src/client";
import { useStream } from "../src/react";
import { createStreamStore } from "../src/react/use-stream";
import { evict, eventually, fresh } from "./helpers";

const base = new URL(inject("workerUrl"));
const objectUrl = (name: string, path: string) => new URL(`/agents/streams-log/${name}/${path}`, base);

async function append(name: string, stream: string, chunk: unknown): Promise<number> {
  const response = await fetch(objectUrl(name, `append?stream=${encodeURIComponent(stream)}`), { method: "POST", body: JSON.stringify(chunk) });
  return ((await response.json()) as { seq: number }).seq;
}
async function settle(name: string, stream: string, how: "close" | "error" | "discard"): Promise<void> {
  const response = await fetch(objectUrl(name, `settle?stream=${encodeURIComponent(stream)}&how=${how}`), { method: "POST" });
  expect(await response.text()).toBe("settled");
}

/** A dokit client of a StreamsLog that reconnects quickly; closed when the test ends. */
function logClient(name: string, options: Partial<AgentClientOptions> = {}) {
  const client = new AgentClient({ agent: "StreamsLog", name, host: base.host, minReconnectionDelay: 20, maxReconnectionDelay: 40, ...options });
  onTestFinished(() => client.close());
  return client;
}

describe("Streams over SSE: a real EventSource client", () => {
  it("reconnects by itself after a dropped connection and an eviction, resumes after Last-Event-ID, and sees every chunk once, then done", async () => {
    const name = fresh("sse-evict");
    await append(name, "job", "line 0");
    await append(name, "job", "line 1");
    // EventSource's own fetch, wrapped: it records what each attempt sent, can drop the current
    // connection (as a network failure would), and can hold reconnects while the test acts.
    const attempts: Headers[] = [];
    let drop = () => {};
    let gate: Promise<void> = Promise.resolve();
    let openGate = () => {};
    const source = new EventSource(objectUrl(name, "sse/job").href, {
      fetch: async (input, init) => {
        await gate;
        attempts.push(new Headers(init?.headers));
        const response = await fetch(input, init);
        const upstream = (response.body as ReadableStream<Uint8Array>).getReader();
        // The body as EventSource reads it: `drop()` fails it as a lost network would (and ends the request).
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            drop = () => {
              controller.error(new TypeError("terminated"));
              void upstream.cancel();
            };
          },
          async pull(controller) {
            const { done, value } = await upstream.read();
            if (done) controller.close();
            else controller.enqueue(value);
          },
        });
        return new Response(body, { status: response.status, headers: response.headers });
      },
    });
    onTestFinished(() => source.close());
    const seen: { id: string; data: unknown }[] = [];
    const events: string[] = [];
    source.addEventListener("message", (event) => seen.push({ id: event.lastEventId, data: JSON.parse(event.data) }));
    source.addEventListener("up-to-date", () => events.push("up-to-date"));
    source.addEventListener("done", () => {
      events.push("done");
      source.close();
    });
    await eventually(() => expect(events).toEqual(["up-to-date"]));
    expect(seen).toEqual([
      { id: "0", data: "line 0" },
      { id: "1", data: "line 1" },
    ]);
    // The connection drops; while the client is away the object is evicted and more is appended.
    gate = new Promise<void>((resolve) => (openGate = resolve));
    drop();
    await evict(name, "evict-streams-log");
    await append(name, "job", "line 2");
    await append(name, "job", "line 3");
    openGate();
    // EventSource reconnects by itself (after its 3 s default delay) with Last-Event-ID: 1.
    await eventually(() => expect(events).toEqual(["up-to-date", "up-to-date"]), { timeout: 10_000 });
    expect(attempts.map((headers) => headers.get("last-event-id"))).toEqual([null, "1"]);
    await settle(name, "job", "close");
    await eventually(() => expect(events.at(-1)).toBe("done"));
    expect(seen.map((e) => e.data)).toEqual(["line 0", "line 1", "line 2", "line 3"]);
    expect(seen.map((e) => e.id)).toEqual(["0", "1", "2", "3"]);
  }, 30_000);

  it("answers a missing stream with 404, which ends the EventSource", async () => {
    const name = fresh("sse-missing");
    const source = new EventSource(objectUrl(name, "sse/none").href);
    onTestFinished(() => source.close());
    const errors: { code?: number }[] = [];
    source.addEventListener("error", (event) => errors.push(event as { code?: number }));
    await eventually(() => expect(errors.length).toBeGreaterThan(0));
    expect(errors[0]?.code).toBe(404);
    expect(source.readyState).toBe(EventSource.CLOSED);
  });
});

describe("Streams over WebSockets: the dokit client's reader", () => {
  it("reads across a forced disconnect and an eviction: every chunk once, in order, then the end", async () => {
    const name = fresh("ws-reader");
    for (let i = 0; i < 3; i++) await append(name, "job", i);
    const client = logClient(name);
    const official = new OfficialClient({ agent: "StreamsLog", name, host: base.host });
    onTestFinished(() => official.close());
    const officialFrames: string[] = [];
    official.addEventListener("message", (event) => officialFrames.push(String((event as MessageEvent).data)));
    let upToDate = 0;
    const reader = client.streams.read<number>("job", { onUpToDate: () => upToDate++ });
    const got: ClientStreamChunk<number>[] = [];
    const done = (async () => {
      for await (const chunk of reader) got.push(chunk);
    })();
    await eventually(() => expect(got.map((c) => c.chunk)).toEqual([0, 1, 2]));
    // The up-to-date frame follows the replay's chunks.
    await eventually(() => expect(upToDate).toBe(1));

    // The server closes the socket (1012): the client reconnects and resumes from cursor 3.
    client.send("kick");
    await append(name, "job", 3);
    await append(name, "job", 4);
    await eventually(() => expect(got.map((c) => c.chunk)).toEqual([0, 1, 2, 3, 4]));

    // The object hibernates with the reader waiting; the next append reaches it.
    await evict(name, "evict-streams-log");
    await append(name, "job", 5);
    await eventually(() => expect(got.map((c) => c.chunk)).toEqual([0, 1, 2, 3, 4, 5]));
    await settle(name, "job", "error");
    await done;
    expect(got.map((c) => c.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(reader.state).toBe("errored");
    expect(reader.error).toBe("producer failed");
    expect(upToDate).toBe(1);

    // The official client beside it: connected throughout, sent no stream frames, still served.
    await official.ready;
    official.send("hello");
    await eventually(() => expect(officialFrames).toContain("echo:hello"));
    expect(officialFrames.filter((frame) => frame.includes("dokit_stream"))).toEqual([]);
  }, 30_000);

  it("reads a stream longer than one replay round (about 4 MiB) without a gap: the client asks for the rest by itself", async () => {
    const name = fresh("ws-rounds");
    const big = "y".repeat(1_000_000);
    for (let i = 0; i < 6; i++) await append(name, "long", `${i}${big}`);
    await settle(name, "long", "close");
    const client = logClient(name);
    const seqs: number[] = [];
    for await (const { seq, chunk } of client.streams.read<string>("long")) {
      expect(chunk.startsWith(String(seq))).toBe(true);
      seqs.push(seq);
    }
    expect(seqs).toEqual([0, 1, 2, 3, 4, 5]);
  }, 30_000);

  it("reads two long streams at once on one socket: the reads the server ignored while a round was unacknowledged go out with the ack", async () => {
    const name = fresh("ws-paced");
    const big = "z".repeat(1_000_000);
    for (const stream of ["a", "b"]) {
      for (let i = 0; i < 6; i++) await append(name, stream, `${i}${big}`);
      await settle(name, stream, "close");
    }
    // What the client sends, as its WebSocket is asked to send it.
    const send = vi.spyOn(WebSocket.prototype, "send");
    onTestFinished(() => send.mockRestore());
    const client = logClient(name);
    const collect = async (stream: string) => {
      const seqs: number[] = [];
      for await (const { seq, chunk } of client.streams.read<string>(stream)) {
        expect(chunk.startsWith(String(seq))).toBe(true);
        seqs.push(seq);
      }
      return seqs;
    };
    expect(await Promise.all([collect("a"), collect("b")])).toEqual([
      [0, 1, 2, 3, 4, 5],
      [0, 1, 2, 3, 4, 5],
    ]);
    const acks = send.mock.calls.map(([data]) => JSON.parse(String(data)) as { type: string; token?: string; reads?: unknown[] }).filter((frame) => frame.type === "dokit_stream_ack");
    // Each round acknowledged with its own token; b's first read, ignored during a's round, went out again with an ack.
    expect(acks.length).toBeGreaterThanOrEqual(4);
    expect(new Set(acks.map((frame) => frame.token)).size).toBe(acks.length);
    expect(acks.some((frame) => frame.reads?.some((read) => JSON.stringify(read) === '{"stream":"b","from":0}'))).toBe(true);
  }, 30_000);

  it("tells a reader plainly when the stream does not exist or was deleted, and resumes from `from`", async () => {
    const name = fresh("ws-missing");
    const client = logClient(name);
    const missing = client.streams.read("none");
    await expect(missing.next()).rejects.toMatchObject({ name: "StreamReadError", code: "STREAM_NOT_FOUND" });

    await append(name, "a", "x");
    await append(name, "a", "y");
    await settle(name, "a", "close");
    const fromOne: unknown[] = [];
    for await (const { chunk } of client.streams.read("a", { from: 1 })) fromOne.push(chunk);
    expect(fromOne).toEqual(["y"]);
    await expect(client.streams.read("a", { from: 5 }).next()).rejects.toMatchObject({ code: "CURSOR_PAST_END" });

    // Deleted while the client was away, after the reader read part of it.
    await append(name, "b", 1);
    const away = { shut: false };
    const reconnecting = logClient(name, { query: async () => {
      while (away.shut) await new Promise((resolve) => setTimeout(resolve, 10));
      return {};
    } });
    const reader = reconnecting.streams.read("b");
    expect((await reader.next()).value).toEqual({ seq: 0, chunk: 1 });
    away.shut = true;
    reconnecting.send("kick");
    await append(name, "b", 2);
    await settle(name, "b", "discard");
    away.shut = false;
    await expect(reader.next()).rejects.toMatchObject({ code: "STREAM_DELETED" });
  }, 30_000);
});

describe("useStream (dokit/react) over loopback", () => {
  it("a render alone reads nothing; the store grows with the stream, resumes after an unsubscribe without a repeat, and ends", async () => {
    const name = fresh("use-stream");
    await append(name, "job", "a");
    const client = logClient(name);
    const reads = vi.spyOn(client.streams, "read");
    const Log = () => createElement("p", null, useStream<string>(client, "job").chunks.join(""));
    expect(renderToString(createElement(Log))).toBe("<p></p>");
    expect(reads).not.toHaveBeenCalled();

    const store = createStreamStore<string>(client.streams, "job");
    let renders = 0;
    const off = store.subscribe(() => renders++);
    await eventually(() => expect(store.get()).toMatchObject({ chunks: ["a"], cursor: 1, upToDate: true, state: "streaming" }));
    await append(name, "job", "b");
    await eventually(() => expect(store.get().chunks).toEqual(["a", "b"]));
    off();
    await append(name, "job", "c");
    const again = store.subscribe(() => renders++);
    onTestFinished(again);
    await append(name, "job", "d");
    await settle(name, "job", "close");
    await eventually(() => expect(store.get().state).toBe("completed"));
    expect(store.get()).toMatchObject({ chunks: ["a", "b", "c", "d"], cursor: 4, error: undefined });
    expect(renders).toBeGreaterThanOrEqual(4);
    // Two reads: the first subscription's, and the resumed one from cursor 2.
    expect(reads.mock.calls.map(([, options]) => options?.from)).toEqual([0, 2]);
  });
});
