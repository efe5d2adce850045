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
/** Acknowledges the round `frame` ended (its token), asking for `reads`. */
const ack = (socket: TestSocket, frame: Frame, reads?: { stream: string; from: number }[]) => socket.send({ type: "dokit_stream_ack", token: frame.token, ...(reads ? { reads } : {}) });
const token = expect.any(String);
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
    expect(await socket.nextJSON()).toEqual({ type: "dokit_stream_up_to_date", stream: "job", cursor: 3, token });
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
    ack(socket, (await socket.frames(2))[1] as Frame);
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
      { type: "dokit_stream_up_to_date", stream: "done", cursor: 1, token },
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
    expect(first[5]).toEqual({ type: "dokit_stream_more", stream: "long", cursor: 5, token });
    // Not tailing until it asks again: an append now is not sent.
    expect(await log.readers()).toBe(0);
    await log.append("long", "tail");
    expect(await socket.drain(50)).toEqual([]);
    ack(socket, first[5] as Frame, [{ stream: "long", from: 5 }]);
    // Chunk 5 fills a block of its own; the tail chunk is in the next block, and its own frame.
    const rest = await socket.frames(3, 5000);
    expect(rest.slice(0, 2).map((frame) => chunks(frame).map(([seq]) => seq))).toEqual([[5], [6]]);
    expect(rest[2]).toEqual({ type: "dokit_stream_up_to_date", stream: "long", cursor: 7, token });
    expect(await log.readers()).toBe(1);
    socket.ws.close(1000);
  });

  it("paces replays per connection: 50 read frames without an ack get one round; only the ack with its token gets the next", async () => {
    const name = fresh("ws-pace");
    const log = env.LIVE_LOG.getByName(name);
    const big = "x".repeat(900_000);
    // Ten chunks of 900 KB: two rounds of five (a round stops once it sent 4 MiB).
    for (let i = 0; i < 10; i++) await log.append("long", `${i}${big}`);
    const socket = await open(name);
    for (let i = 0; i < 50; i++) read(socket, "long");
    const first = await socket.frames(6, 5000);
    expect(first.slice(0, 5).map((frame) => chunks(frame).map(([seq]) => seq))).toEqual([[0], [1], [2], [3], [4]]);
    expect(first[5]).toEqual({ type: "dokit_stream_more", stream: "long", cursor: 5, token });
    // The other 49 reads were not served: nothing more arrives.
    const late = await socket.drain(500);
    expect({ frames: late.length, bytes: late.reduce((n, frame) => n + String(frame).length, 0) }).toEqual({ frames: 0, bytes: 0 });

    // A wrong token, a missing one, or another read frame changes nothing.
    const more = first[5] as Frame;
    socket.send({ type: "dokit_stream_ack", token: "00000000-0000-4000-8000-000000000000", reads: [{ stream: "long", from: 5 }] });
    socket.send({ type: "dokit_stream_ack", reads: [{ stream: "long", from: 5 }] });
    read(socket, "long", 5);
    expect(await socket.drain(300)).toEqual([]);

    // The ack with the round's token: the read it lists is served, the next round with a new token.
    ack(socket, more, [{ stream: "long", from: 5 }]);
    const second = await socket.frames(6, 5000);
    expect(second.slice(0, 5).map((frame) => chunks(frame).map(([seq]) => seq))).toEqual([[5], [6], [7], [8], [9]]);
    expect(second[5]).toEqual({ type: "dokit_stream_up_to_date", stream: "long", cursor: 10, token });
    expect(second[5]?.token).not.toBe(more.token);
    // The first token again is a wrong one now.
    ack(socket, more, [{ stream: "long", from: 0 }]);
    expect(await socket.drain(300)).toEqual([]);
    ack(socket, second[5] as Frame);
    // A replay that sends no chunk ends with no token, and the live tail is not paced.
    read(socket, "long", 10);
    expect(await socket.nextJSON()).toEqual({ type: "dokit_stream_up_to_date", stream: "long", cursor: 10 });
    await log.append("long", "a");
    await log.append("long", "b");
    expect((await socket.frames(2)).map(chunks)).toEqual([[[10, "a"]], [[11, "b"]]]);
    socket.ws.close(1000);
  }, 30_000);

  it("serves an ack that comes after the object restarted (its token forgotten): the reads it lists go on", async () => {
    const name = fresh("ws-pace-evict");
    const log = env.LIVE_LOG.getByName(name);
    await log.append("job", "a");
    await log.open("other");
    const socket = await open(name);
    read(socket, "job");
    const round = await socket.frames(2);
    expect(round[1]).toEqual({ type: "dokit_stream_up_to_date", stream: "job", cursor: 1, token });
    // Sent before the ack: not served, the ack asks again.
    read(socket, "other");
    expect(await socket.drain(100)).toEqual([]);
    await hibernate(log);
    ack(socket, round[1] as Frame, [{ stream: "other", from: 0 }]);
    expect(await socket.nextJSON()).toEqual({ type: "dokit_stream_up_to_date", stream: "other", cursor: 0 });
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
