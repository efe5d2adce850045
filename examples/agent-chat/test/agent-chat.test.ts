import { env, exports } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { openSocket, type TestSocket } from "dokit/testing";
import { fresh } from "../../test-helpers";
import { replyIdOf, streamIdOf, textOf } from "../src/api";
import { replyText, replyTokens } from "../src/model";

// The Worker's own fetch (typed by GlobalProps in env.d.ts): requests go through its routing.
const worker = exports.default;
const send = (chat: string, body: unknown) =>
  worker.fetch(`http://example.com/agents/agent-chat/${chat}/send`, { method: "POST", body: JSON.stringify(body) });
// A stub that met an abort stays broken: take a new one for every call.
const stubOf = (chat: string) => env.AgentChat.getByName(chat);

/** A turn as the object holds it: the conversation, the reply's stream and its rows, the run. */
async function look(chat: string, id: string) {
  return runInDurableObject(stubOf(chat), async (instance, ctx) => {
    await instance.lifecycle.start(); // a woken object takes over the run an aborted instance held
    const [run] = await instance.tasks.inspect(1);
    return {
      history: (await instance.session.getHistory()).map((message) => ({ id: message.id, role: message.role, text: textOf(message) })),
      stream: await instance.streams.status(streamIdOf(id)),
      blocks: ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM dokit_stream_blocks WHERE stream = ?", streamIdOf(id)).one().n,
      run,
    };
  });
}

/** Waits until the turn's run has completed. */
async function completed(chat: string, id: string) {
  let last: Awaited<ReturnType<typeof look>> | undefined;
  await vi.waitFor(
    async () => {
      last = await look(chat, id);
      expect(last.run?.state).toBe("completed");
    },
    { timeout: 20_000, interval: 100 },
  );
  return last as Awaited<ReturnType<typeof look>>;
}

/** Reads a stream's chunks over a socket from `from` until `enough` says stop, or the stream ends. */
async function readOver(socket: TestSocket, streamId: string, from: number, enough: (tokens: string[]) => boolean) {
  socket.send({ type: "dokit_stream_read", stream: streamId, from });
  const seqs: number[] = [];
  const tokens: string[] = [];
  for (;;) {
    const frame = await socket.nextJSON<{ type: string; chunks?: { seq: number; chunk: string }[]; state?: string }>();
    if (frame.type === "dokit_stream") {
      for (const { seq, chunk } of frame.chunks ?? []) {
        seqs.push(seq);
        tokens.push(chunk);
      }
      if (enough(tokens)) return { seqs, tokens, state: undefined };
    }
    if (frame.type === "dokit_stream_end") return { seqs, tokens, state: frame.state };
  }
}

describe("agent-chat: a turn is a task that streams the reply, then moves it into the session", () => {
  it("lands the question and the whole reply in the session, and the reply's stream is gone in the same commit", async () => {
    const chat = fresh("turn");
    const question = "What is a durable turn?";
    expect((await send(chat, { id: "q1", text: question, everyMs: 10 })).status).toBe(202);
    // One turn at a time: a second question while the reply is written is refused.
    expect((await send(chat, { id: "q2", text: "and another?", everyMs: 10 })).status).toBe(409);
    const done = await completed(chat, "q1");
    expect(done.history).toEqual([
      { id: "q1", role: "user", text: question },
      { id: replyIdOf("q1"), role: "assistant", text: replyText(question) },
    ]);
    expect(done.stream).toBeNull();
    expect(done.blocks).toBe(0);
    expect(done.run?.steps.map((step) => [step.name, step.state, step.attempts])).toEqual([
      ["receive", "done", 1],
      ["reply", "done", 1],
    ]);
    // The next turn follows on the same chain.
    expect((await send(chat, { id: "q2", text: "and another?", everyMs: 10 })).status).toBe(202);
    expect((await completed(chat, "q2")).history.map((message) => message.id)).toEqual(["q1", replyIdOf("q1"), "q2", replyIdOf("q2")]);
  });

  it("refuses a malformed or oversized question, storing nothing", async () => {
    const chat = fresh("bad");
    for (const body of [{ id: "a b", text: "hi" }, { id: "ok", text: "" }, { id: "ok", text: "x".repeat(2001) }, "not an object", { text: "no id" }]) {
      expect((await send(chat, body)).status).toBe(400);
    }
    expect((await send(chat, { id: "big", text: "x".repeat(20_000) })).status).toBe(413); // the body is not read past 16 KiB
    const state = await look(chat, "ok");
    expect(state).toMatchObject({ history: [], stream: null, run: undefined });
  });

  it("has no crash route as shipped: the demo control answers 404 unless AGENT_CHAT_CRASH is on", async () => {
    const chat = fresh("no-crash");
    const crash = await worker.fetch(`http://example.com/agents/agent-chat/${chat}/crash`, { method: "POST" });
    expect(crash.status).toBe(404);
    expect((await send(chat, { id: "q1", text: "still here?", everyMs: 10 })).status).toBe(202);
    expect((await completed(chat, "q1")).run?.steps.find((step) => step.name === "reply")).toMatchObject({ state: "done", attempts: 1 });
  });

  it("resumes a turn whose object is aborted mid-reply from the stream's cursor: no token twice, none lost", { timeout: 30_000 }, async () => {
    const chat = fresh("abort");
    const question = "Will you survive a crash?";
    const total = replyTokens(question).length;
    expect((await send(chat, { id: "q1", text: question, everyMs: 40 })).status).toBe(202);
    await vi.waitFor(async () => expect((await look(chat, "q1")).stream?.cursor).toBeGreaterThanOrEqual(8), { timeout: 10_000, interval: 50 });
    let cursorAtAbort = -1;
    await runInDurableObject(stubOf(chat), async (instance, ctx) => {
      cursorAtAbort = (await instance.streams.status(streamIdOf("q1")))?.cursor ?? -1;
      ctx.abort("test: crash mid-reply");
    }).catch(() => {}); // the call itself meets the abort
    expect(cursorAtAbort).toBeGreaterThanOrEqual(8);
    expect(cursorAtAbort).toBeLessThan(total);
    const done = await completed(chat, "q1");
    expect(done.history).toEqual([
      { id: "q1", role: "user", text: question },
      { id: replyIdOf("q1"), role: "assistant", text: replyText(question) },
    ]);
    expect(done.stream).toBeNull();
    expect(done.blocks).toBe(0);
    // The reply step was cut short once and ran again: the second attempt continued the stream.
    expect(done.run?.steps.find((step) => step.name === "reply")).toMatchObject({ state: "done", attempts: 2 });
  });

  it("ends a turn whose reply step dies on every attempt with a message saying so, and no live stream", { timeout: 60_000 }, async () => {
    const chat = fresh("give-up");
    const question = "Will you give up?";
    expect((await send(chat, { id: "q1", text: question, everyMs: 40 })).status).toBe(202);
    // Abort the object in the middle of each of the reply step's 5 attempts (each one streams a few more tokens).
    let aborts = 0;
    let cursor = 0;
    while (aborts < 5) {
      const at = cursor + 2;
      await vi.waitFor(async () => expect((await look(chat, "q1")).stream?.cursor).toBeGreaterThanOrEqual(at), { timeout: 20_000, interval: 50 });
      await runInDurableObject(stubOf(chat), async (instance, ctx) => {
        cursor = (await instance.streams.status(streamIdOf("q1")))?.cursor ?? cursor;
        aborts++;
        ctx.abort("test: crash on every attempt");
      }).catch(() => {});
    }
    const done = await completed(chat, "q1");
    expect(done.history).toEqual([
      { id: "q1", role: "user", text: question },
      { id: replyIdOf("q1"), role: "assistant", text: expect.stringMatching(/^\(no reply: dokit: .*\)$/) },
    ]);
    expect(done.stream).toBeNull();
    expect(done.blocks).toBe(0);
    expect(done.run?.steps.map((step) => [step.name, step.state])).toEqual([
      ["receive", "done"],
      ["reply", "failed"],
      ["give up", "done"],
    ]);
  });

  it("gives a reader that reconnects mid-reply every token once, in order, then the end", { timeout: 30_000 }, async () => {
    const chat = fresh("reader");
    const question = "Can I reconnect?";
    expect((await send(chat, { id: "q1", text: question, everyMs: 30 })).status).toBe(202);
    await vi.waitFor(async () => expect((await look(chat, "q1")).stream).not.toBeNull(), { timeout: 10_000, interval: 20 });
    const url = `http://example.com/agents/agent-chat/${chat}`;
    const first = await openSocket(worker, url);
    const before = await readOver(first, streamIdOf("q1"), 0, (tokens) => tokens.length >= 5);
    first.ws.close(1000);
    expect(before.state).toBeUndefined(); // mid-reply
    const second = await openSocket(worker, url);
    const after = await readOver(second, streamIdOf("q1"), before.tokens.length, () => false);
    second.ws.close(1000);
    // The cutover deleted the stream once the reader had every chunk: it ends as "deleted", not failed.
    expect(after.state).toBe("deleted");
    expect([...before.seqs, ...after.seqs]).toEqual(replyTokens(question).map((_, seq) => seq));
    expect([...before.tokens, ...after.tokens]).toEqual(replyTokens(question));
    expect((await completed(chat, "q1")).history.at(-1)?.text).toBe(replyText(question));
  });

  it("serves its page", async () => {
    const response = await worker.fetch("http://example.com/");
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await response.text()).toContain("A durable chat turn");
  });
});
