import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { expectHibernates, hibernate, openSocket, type TestSocket } from "../../src/testing";
import { fresh } from "../helpers";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: { fetch(input: Request | string, init?: RequestInit): Promise<Response> } }).default;
type Frame = Record<string, unknown>;

/** Opens a connection to LiveLog `name` and reads its identity frame. */
async function open(name: string, query: Record<string, string> = {}): Promise<TestSocket> {
  const socket = await openSocket(worker, `http://example.com/agents/live-log/${name}`, { query });
  expect(await socket.nextJSON()).toMatchObject({ type: "cf_agent_identity" });
  return socket;
}
const read = (socket: TestSocket, stream: string, from?: number) => socket.send({ type: "dokit_stream_read", stream, ...(from === undefined ? {} : { from }) });
const chunks = (frame: Frame) => (frame.chunks as { seq: number; chunk: unknown }[]).map((c) => [c.seq, c.chunk]);

describe("Streams: WebSocket readers", () => {
  it("replays from the cursor, says up-to-date, tails appends and ends with the settlement", async () => {
    const name = fresh("ws-read");
    const log = env.LIVE_LOG.getByName(name);
    for (const line of ["a", "b", "c"]) await log.append("job", line);
    const socket = await open(name);
    read(socket, "job", 1);
    expect(chunks(await socket.nextJSON())).toEqual([
      [1, "b"],
      [2, "c"],
    ]);
    expect(await socket.nextJSON()).toEqual({ type: "dokit_stream_up_to_date", stream: "job", cursor: 3 });
    await log.append("job", "d");
    expect(await socket.nextJSON()).toEqual({ type: "dokit_stream", stream: "job", chunks: [{ seq: 3, chunk: "d" }] });
    await log.settle("job", "error");
    expect(await socket.nextJSON()).toEqual({ type: "dokit_stream_end", stream: "job", state: "errored", cursor: 4, error: "producer failed" });
    expect(await log.readers()).toBe(0);
    socket.ws.close(1000);
  });

  it("lets the object hibernate while readers wait; the next append wakes it and reaches them, nothing repeated", async () => {
    const name = fresh("ws-hibernate");
    const log = env.LIVE_LOG.getByName(name);
    await log.append("job", 0);
    const a = await open(name, { _pk: "a" });
    const b = await open(name, { _pk: "b", readonly: "1" });
    for (const socket of [a, b]) {
      read(socket, "job");
      expect(chunks(await socket.nextJSON())).toEqual([[0, 0]]);
      expect(await socket.nextJSON()).toMatchObject({ type: "dokit_stream_up_to_date", cursor: 1 });
    }
    await hibernate(log);
    await log.append("job", 1);
    await log.append("job", 2);
    for (const socket of [a, b]) {
      expect((await socket.frames(2)).map(chunks)).toEqual([[[1, 1]], [[2, 2]]]);
    }
    await hibernate(log);
    await log.settle("job", "close");
    for (const socket of [a, b]) {
      expect(await socket.nextJSON()).toEqual({ type: "dokit_stream_end", stream: "job", state: "completed", cursor: 3 });
      expect(await socket.drain(50)).toEqual([]);
      socket.ws.close(1000);
    }
  });

  it("tells a reader plainly: a missing stream, a cursor past the end, a malformed frame, a refused read, too many reads", async () => {
    const name = fresh("ws-errors");
    const log = env.LIVE_LOG.getByName(name);
    await log.append("job", "x");
    await log.append("secret:plan", "y");
    const socket = await open(name, { tag: "guest" });
    read(socket, "nope");
    expect(await socket.nextJSON()).toEqual({ type: "dokit_error", code: "STREAM_NOT_FOUND", error: 'dokit: stream "nope" does not exist (never opened, or deleted)', stream: "nope" });
    read(socket, "job", 5);
    expect(await socket.nextJSON()).toMatchObject({ type: "dokit_error", code: "CURSOR_PAST_END", stream: "job" });
    socket.send({ type: "dokit_stream_read", stream: "job", from: -1 });
    expect(await socket.nextJSON()).toMatchObject({ type: "dokit_error", code: "INVALID_STREAM_FRAME", stream: "job" });
    socket.send({ type: "dokit_stream_read", stream: 7 });
    expect(await socket.nextJSON()).toMatchObject({ type: "dokit_error", code: "INVALID_STREAM_FRAME" });
    read(socket, "secret:plan");
    expect(await socket.nextJSON()).toMatchObject({ type: "dokit_error", code: "STREAM_READ_REFUSED", stream: "secret:plan" });
    for (const id of ["s1", "s2", "s3", "s4"]) await log.open(id);
    for (const id of ["s1", "s2", "s3"]) {
      read(socket, id);
      expect(await socket.nextJSON()).toMatchObject({ type: "dokit_stream_up_to_date", stream: id, cursor: 0 });
    }
    read(socket, "s4");
    expect(await socket.nextJSON()).toMatchObject({ type: "dokit_error", code: "TOO_MANY_READS", stream: "s4" });
    socket.send({ type: "dokit_stream_cancel", stream: "s1" });
    read(socket, "s4");
    expect(await socket.nextJSON()).toMatchObject({ type: "dokit_stream_up_to_date", stream: "s4" });
    // None of it closed the connection or reached other streams' readers.
    expect(await log.readers()).toBe(3);
    socket.ws.close(1000);
  });

  it("tells tailing readers of a deleted or discarded stream, and forgets a closed connection's reads", async () => {
    const name = fresh("ws-deleted");
    const log = env.LIVE_LOG.getByName(name);
    await log.append("discarded", "x");
    await log.append("later", "y");
    const socket = await open(name);
    read(socket, "discarded");
    await socket.frames(2);
    await log.settle("discarded", "discard");
    expect(await socket.nextJSON()).toEqual({ type: "dokit_stream_end", stream: "discarded", state: "deleted", cursor: 1 });
    await log.settle("later", "close");
    expect(await log.remove("later")).toBe(true);
    read(socket, "later");
    expect(await socket.nextJSON()).toMatchObject({ type: "dokit_error", code: "STREAM_NOT_FOUND" });
    await log.open("open");
    read(socket, "open");
    await socket.nextJSON();
    expect(await log.readers()).toBe(1);
    socket.ws.close(1000);
    await socket.closed;
    await expect.poll(() => log.readers()).toBe(0);
  });

  it("sends a reader of a settled stream everything, then the end, and keeps no row for it", async () => {
    const name = fresh("ws-settled");
    const log = env.LIVE_LOG.getByName(name);
    await log.append("done", 1);
    await log.settle("done", "close");
    const socket = await open(name);
    read(socket, "done");
    expect(await socket.frames(3)).toEqual([
      { type: "dokit_stream", stream: "done", chunks: [{ seq: 0, chunk: 1 }] },
      { type: "dokit_stream_up_to_date", stream: "done", cursor: 1 },
      { type: "dokit_stream_end", stream: "done", state: "completed", cursor: 1 },
    ]);
    expect(await log.readers()).toBe(0);
    socket.ws.close(1000);
  });

  it("replays a long stream in rounds of about 4 MiB: the rest is sent when the reader asks again", async () => {
    const name = fresh("ws-rounds");
    const log = env.LIVE_LOG.getByName(name);
    const big = "x".repeat(1_000_000);
    for (let i = 0; i < 6; i++) await log.append("long", `${i}${big}`);
    const socket = await open(name);
    read(socket, "long");
    const first = await socket.frames(6, 5000);
    expect(first.slice(0, 5).map((frame) => chunks(frame).map(([seq]) => seq))).toEqual([[0], [1], [2], [3], [4]]);
    expect(first[5]).toEqual({ type: "dokit_stream_more", stream: "long", cursor: 5 });
    // Not tailing until it asks again: an append now is not sent.
    expect(await log.readers()).toBe(0);
    await log.append("long", "tail");
    expect(await socket.drain(50)).toEqual([]);
    read(socket, "long", 5);
    // Chunk 5 fills a block of its own; the tail chunk is in the next block, and its own frame.
    const rest = await socket.frames(3, 5000);
    expect(rest.slice(0, 2).map((frame) => chunks(frame).map(([seq]) => seq))).toEqual([[5], [6]]);
    expect(rest[2]).toEqual({ type: "dokit_stream_up_to_date", stream: "long", cursor: 7 });
    expect(await log.readers()).toBe(1);
    socket.ws.close(1000);
  });

  it("readers waiting on an idle stream do not keep the object awake: the runtime evicts it, and the next append reaches them", async () => {
    const name = fresh("ws-idle");
    const log = env.LIVE_LOG.getByName(name);
    await log.append("job", "before");
    const socket = await open(name);
    read(socket, "job");
    await socket.frames(2);
    const { result } = await expectHibernates(log, { idleMs: 100, next: () => log.append("job", "after") });
    expect(result).toBe(1);
    expect(await socket.nextJSON()).toEqual({ type: "dokit_stream", stream: "job", chunks: [{ seq: 1, chunk: "after" }] });
    socket.ws.close(1000);
  }, 30_000);
});
