// A chat with a model whose reply survives a page reload and a crash of the object. Three dokit
// capabilities, composed here without knowing of each other:
//   - Sessions keeps the conversation (pages watch it live over their WebSocket);
//   - Tasks runs each turn as a durable run: receive the question, then write the reply;
//   - Streams holds the reply's tokens while it is written (pages read it with client.streams.read).
// The reply's producer starts at its stream's own cursor, so an attempt after a crash continues
// the reply: no token twice, none lost. When the reply ends, the cutover lands it in the session
// and deletes the stream's rows in one SQLite transaction.
import { DurableObject } from "cloudflare:workers";
import { Inspector } from "dokit/inspector";
import { Lifecycle } from "dokit/lifecycle";
import { Observability } from "dokit/observability";
import { type SessionMessage, Sessions } from "dokit/sessions";
import { Streams, type StreamWriter } from "dokit/streams";
import { Tasks, type TaskStep } from "dokit/tasks";
import { WebSockets } from "dokit/websockets";
import { replyIdOf, streamIdOf, type Token, type Turn } from "./api";
import { generate } from "./model";

/** The longest question the page may send, in characters. */
const MAX_TEXT = 2000;
/** The largest request body `send` reads, in bytes (a question is far smaller). */
const MAX_BODY = 16_384;

/** @returns the JSON value of `text`, or `undefined` when it is not JSON */
function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export class AgentChat extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets();
  // Pages read a reply's tokens over their WebSocket while it is written.
  readonly streams = new Streams({ webSockets: this.webSockets });
  // Every connection reads the conversation live; none writes it (questions come through `send`).
  readonly sessions = new Sessions();
  readonly tasks = new Tasks({ definitions: { "turn@v1": (turn: Turn, step: TaskStep) => this.#turn(turn, step) } });
  readonly lifecycle = Lifecycle.install(this)
    .use(this.streams)
    .use(this.sessions)
    .use(this.tasks)
    // The live inspector at /agents/agent-chat/{name}/__dokit (localhost only: docs/inspector.md).
    .use(new Inspector({ enabled: true, tasks: this.tasks, observability: new Observability(), webSockets: this.webSockets }));
  /** The object's one conversation. */
  readonly session = this.sessions.session();

  async onRequest(request: Request): Promise<Response> {
    const { pathname } = new URL(request.url);
    // POST …/crash: a demo control, off unless the Worker's AGENT_CHAT_CRASH var is "on" (the browser test
    // turns it on; so does `./dev --var AGENT_CHAT_CRASH:on`). It crashes the object as a deploy or a
    // fault would: the turn's attempt dies mid-reply, and the next wake of the object resumes the turn.
    if (request.method === "POST" && pathname.endsWith("/crash") && this.env.AGENT_CHAT_CRASH === "on") {
      // After this answer: the request that asks for the crash gets its 202 instead of meeting the abort.
      setTimeout(() => this.ctx.abort("agent-chat demo: the object was crashed on purpose (POST /crash)"), 0);
      return new Response(null, { status: 202 });
    }
    // POST …/send {id, text, everyMs?}: a question; the reply streams to every page.
    if (request.method !== "POST" || !pathname.endsWith("/send")) return new Response("not found", { status: 404 });
    if (Number(request.headers.get("content-length") ?? 0) > MAX_BODY) return new Response("too large", { status: 413 });
    const raw = await request.text();
    if (raw.length > MAX_BODY) return new Response("too large", { status: 413 });
    const { id, text, everyMs } = (parse(raw) ?? {}) as Record<string, unknown>;
    if (typeof id !== "string" || !/^[\w-]{1,64}$/.test(id) || typeof text !== "string" || !text.trim() || text.length > MAX_TEXT) {
      return new Response(`expected {"id": 1 to 64 word characters, "text": 1 to ${MAX_TEXT} characters}`, { status: 400 });
    }
    const pace = Math.min(Math.max(Number(everyMs) || 80, 10), 1000);
    return (await this.#start({ id, text, everyMs: pace })) ? Response.json({ id }, { status: 202 }) : new Response("a reply is being written", { status: 409 });
  }

  /** Starts a turn. @returns false when a turn is already under way (one at a time keeps the conversation a chain) */
  async #start(turn: Turn): Promise<boolean> {
    await this.lifecycle.start();
    if ((await this.tasks.list({ status: ["pending", "running", "waiting"], limit: 1 })).length > 0) return false;
    await this.tasks.run("turn@v1", turn, { idempotencyKey: `turn:${turn.id}` });
    return true;
  }

  /** One turn: the question lands in the session, then the reply streams and lands after it. */
  async #turn(turn: Turn, step: TaskStep): Promise<string> {
    await step.do("receive", async () => {
      // The reply's stream exists before the question does: a page that sees the question finds it.
      await this.streams.open(streamIdOf(turn.id), { tag: "reply" });
      await this.session.appendMessage({ id: turn.id, role: "user", parts: [{ type: "text", text: turn.text }] });
    });
    try {
      await step.do("reply", ({ signal }) => this.#reply(turn, signal));
    } catch (error) {
      // Out of attempts: the turn ends with a message saying so, and no page waits on the stream for ever.
      await step.do("give up", () => this.#giveUp(turn, error instanceof Error ? error.message : String(error)));
    }
    return replyIdOf(turn.id);
  }

  /** Writes the reply from where its stream is, then moves it into the session (the cutover). */
  async #reply(turn: Turn, signal: AbortSignal): Promise<void> {
    // The cutover committed in an attempt that died before the step was journaled: nothing is left to do.
    if (await this.session.getMessage(replyIdOf(turn.id))) return;
    const streamId = streamIdOf(turn.id);
    // Opening again fences an earlier attempt's writer; the cursor is how many tokens are stored.
    const writer = await this.streams.open(streamId);
    const tokens = await this.#stored(streamId, writer.cursor);
    for await (const token of generate(turn.text, { from: writer.cursor, everyMs: turn.everyMs, signal })) {
      writer.append(token satisfies Token);
      tokens.push(token);
    }
    await this.#cutover(writer, { id: replyIdOf(turn.id), role: "assistant", parts: [{ type: "text", text: tokens.join("") }] }, turn.id);
  }

  /** Closes the stream (or errors it), upserts `message` and deletes the stream's rows, in one transaction. */
  async #cutover(writer: StreamWriter, message: SessionMessage, parentId: string, failure?: string): Promise<void> {
    const sync = this.session.sync();
    let after: (() => Promise<void>) | undefined;
    const commit = () => {
      after = sync.upsert(message, { parentId }).after;
    };
    try {
      if (failure === undefined) writer.close({ commit, discard: true });
      else writer.error(failure, { commit, discard: true });
    } catch (error) {
      sync.abandon(); // rolled back: the session's memory of storage is read again
      throw error;
    }
    await after?.(); // committed: pages watching the session receive the message
  }

  /** The tokens earlier attempts stored: the first `cursor` chunks of the stream. */
  async #stored(streamId: string, cursor: number): Promise<string[]> {
    const tokens: string[] = [];
    if (cursor === 0) return tokens;
    for await (const { chunk } of this.streams.read(streamId)) {
      tokens.push(chunk as Token);
      if (tokens.length === cursor) break;
    }
    return tokens;
  }

  /** Ends a reply that failed for good: the stream errors and a message saying so takes its place. */
  async #giveUp(turn: Turn, reason: string): Promise<void> {
    const streamId = streamIdOf(turn.id);
    if ((await this.streams.status(streamId))?.state !== "streaming") return;
    const text = `(no reply: ${reason.slice(0, 200)})`;
    const message = { id: replyIdOf(turn.id), role: "assistant", parts: [{ type: "text", text }] };
    await this.#cutover(await this.streams.open(streamId), message, turn.id, reason);
  }
}
