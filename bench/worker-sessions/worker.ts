// Two objects doing the same work: DokitSessions with dokit/sessions, RefSessions with npm
// agents@0.32.0's agents/sessions, each installed on a plain Durable Object. Routes:
// /{dokit|ref}/{name}/{action}: rows (one append of ?kind=text|2mb|image; the rows it wrote),
// fill (?n appends of a ~200-byte text message), history (iterate history(); the count), recent
// (getRecentHistory(8 MiB); the count), search (?q; the hit count), peak (history() with a full
// collection and a pause every ?every messages, for the heap reads; needs --expose-gc), ping; /gc
// runs a full collection.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle as RefLifecycle } from "agents/lifecycle";
import { Sessions as RefSessionsCapability } from "agents/sessions";
import { Lifecycle } from "../../packages/dokit/src/lifecycle";
import { Sessions } from "../../packages/dokit/src/sessions";
import { countRows } from "../lib/rows";

interface Env {
  DOKIT_SESSIONS: DurableObjectNamespace<DokitSessions>;
  REF_SESSIONS: DurableObjectNamespace<RefSessions>;
}

type Message = { id: string; role: string; parts: { type: string; text?: string; mediaType?: string; url?: string }[] };
type Handle = {
  appendMessage(message: Message): Promise<unknown>;
  history(): AsyncGenerator<unknown>;
  getRecentHistory(bytes: number): Promise<{ messages: unknown[] }>;
  search(query: string): Promise<unknown[]>;
};

const WORDS = ["deploy", "failed", "retry", "cache", "region", "latency", "token", "budget", "queue", "alarm", "socket", "branch"];
let serial = 0;
/** How long the "peak" read leaves the isolate idle after each collection, for the bench's heap read. */
const PAUSE_MS = 10;

function message(kind: string): Message {
  const id = `${kind}-${Date.now()}-${serial++}`;
  if (kind === "2mb") return { id, role: "assistant", parts: [{ type: "text", text: "x".repeat(2_000_000) }] };
  if (kind === "image") return { id, role: "user", parts: [{ type: "file", mediaType: "image/png", url: `data:image/png;base64,${randomBase64(200 * 1024)}` }] };
  const n = serial;
  const text = Array.from({ length: 30 }, (_, i) => WORDS[(n * 7 + i * 3) % WORDS.length]).join(" ");
  return { id, role: n % 2 ? "assistant" : "user", parts: [{ type: "text", text }] };
}

/** @returns `bytes` random bytes as base64 (a distinct, valid payload every call) */
function randomBase64(bytes: number): string {
  const data = new Uint8Array(bytes);
  for (let at = 0; at < bytes; at += 65536) crypto.getRandomValues(data.subarray(at, Math.min(bytes, at + 65536)));
  let binary = "";
  for (let at = 0; at < bytes; at += 8192) binary += String.fromCharCode(...data.subarray(at, at + 8192));
  return btoa(binary);
}

/** Runs `fn`, counting the rows written by every statement on this object's SQLite. */
async function rowsWritten(sql: SqlStorage, fn: () => Promise<unknown>): Promise<number> {
  const rows = countRows(sql);
  try {
    await fn();
  } finally {
    rows.uninstall();
  }
  return rows.written();
}

async function act(handle: Handle, sql: SqlStorage, action: string, params: URLSearchParams): Promise<number> {
  switch (action) {
    case "rows":
      return rowsWritten(sql, () => handle.appendMessage(message(params.get("kind") ?? "text")));
    case "fill": {
      const n = Number(params.get("n") ?? 1000);
      for (let i = 0; i < n; i++) await handle.appendMessage(message("text"));
      return n;
    }
    case "history": {
      let count = 0;
      for await (const _ of handle.history()) count++;
      return count;
    }
    case "peak": {
      // history() read as "history" reads it, and every `every` messages a full collection, then a
      // pause with the isolate idle: the bench reads its live heap over the inspector meanwhile.
      const every = Number(params.get("every") ?? 100);
      const gc = (globalThis as { gc?: () => void }).gc;
      if (!gc) throw new Error("start workerd with --expose-gc");
      let count = 0;
      for await (const _ of handle.history()) {
        if (++count % every !== 0) continue;
        gc();
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      }
      return count;
    }
    case "recent":
      return (await handle.getRecentHistory(8 * 1024 * 1024)).messages.length;
    case "search":
      return (await handle.search(params.get("q") ?? "deploy")).length;
    default:
      return 0;
  }
}

export class DokitSessions extends DurableObject<Env> {
  readonly sessions = new Sessions();
  readonly lifecycle = Lifecycle.install(this).use(this.sessions);

  async run(action: string, query: string): Promise<number> {
    await this.lifecycle.start();
    return act(this.sessions.session() as unknown as Handle, this.ctx.storage.sql, action, new URLSearchParams(query));
  }
}

export class RefSessions extends DurableObject<Env> {
  readonly sessions = new RefSessionsCapability();
  readonly lifecycle = RefLifecycle.install(this).use(this.sessions);

  // A DO RPC call is no entry point the reference's Lifecycle wraps: start it, as its docs do.
  async run(action: string, query: string): Promise<number> {
    await this.lifecycle.start();
    return act(this.sessions.session() as unknown as Handle, this.ctx.storage.sql, action, new URLSearchParams(query));
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/gc") {
      // A full collection, for the heap reads of the "peak" measure (lib/heap.ts); needs --expose-gc.
      const gc = (globalThis as { gc?: () => void }).gc;
      if (!gc) return new Response("start workerd with --expose-gc", { status: 501 });
      gc();
      return Response.json(null);
    }
    const [, impl, name, action] = url.pathname.split("/");
    if (!name || !action) return new Response("no route", { status: 404 });
    const namespace = impl === "ref" ? env.REF_SESSIONS : env.DOKIT_SESSIONS;
    const stub = namespace.getByName(name) as unknown as { run(action: string, query: string): Promise<number> };
    return Response.json(await stub.run(action, url.search.slice(1)));
  },
} satisfies ExportedHandler<Env>;
