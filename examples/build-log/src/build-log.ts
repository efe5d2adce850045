// A build runner whose log is a durable stream. `POST start` begins a build: a producer appends
// one line every `everyMs` until `lines` lines are written, then closes the stream. Every line is
// stored before it is sent, so a page that reloads continues from the cursor it had, and a build
// cut short by a restart of the object continues from the stream's own cursor (onStart).
import { DurableObject } from "cloudflare:workers";
import { Inspector } from "dokit/inspector";
import { Lifecycle } from "dokit/lifecycle";
import { Observability } from "dokit/observability";
import { sseResponse, Streams, type StreamWriter } from "dokit/streams";
import { WebSockets } from "dokit/websockets";
import type { LogLine } from "./api";

const STEPS = ["checkout", "install", "compile", "test", "package"];

/** What the build log is told about a build when it starts (its stream's metadata). */
type Plan = { lines: number; everyMs: number };

export class BuildLog extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets();
  // Pages read logs over their WebSocket; finished logs are deleted after a day, and at most 20 are kept.
  readonly streams = new Streams({ webSockets: this.webSockets, retention: { maxAgeMs: 86_400_000, maxCount: 20 } });
  readonly lifecycle = Lifecycle.install(this)
    .use(this.streams)
    // The live inspector at /agents/build-log/{name}/__dokit (localhost only: docs/inspector.md).
    .use(new Inspector({ enabled: true, observability: new Observability(), webSockets: this.webSockets }));

  /** A build that was running when the object stopped continues from where its log is. */
  async onStart(): Promise<void> {
    for (const build of await this.streams.list({ state: "streaming", tag: "build" })) {
      void this.#produce(await this.streams.open(build.streamId), build.metadata as Plan);
    }
  }

  async onRequest(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const [action, id] = url.pathname.split("/").slice(-2);
    // POST …/start?lines=&everyMs=: a new build; answers its stream id.
    if (id === "start" && request.method === "POST") {
      const plan: Plan = {
        lines: Math.min(Number(url.searchParams.get("lines") ?? 40) || 40, 1000),
        everyMs: Math.max(Number(url.searchParams.get("everyMs") ?? 250) || 250, 10),
      };
      const streamId = `build-${Date.now().toString(36)}`;
      void this.#produce(await this.streams.open(streamId, { tag: "build", metadata: plan }), plan);
      return Response.json({ id: streamId });
    }
    // GET …/latest: the newest build's status.
    if (id === "latest") return Response.json((await this.streams.list({ tag: "build", limit: 1 }))[0] ?? null);
    // GET …/log/<id>: a build's log as Server-Sent Events (`curl -N` it).
    if (action === "log" && id) return sseResponse(this.streams, decodeURIComponent(id), { request });
    return new Response("not found", { status: 404 });
  }

  /** Appends the build's lines from the stream's own cursor, so a resumed build repeats none. */
  async #produce(log: StreamWriter, plan: Plan): Promise<void> {
    try {
      for (let n = log.cursor; n < plan.lines; n++) {
        await new Promise((resolve) => setTimeout(resolve, plan.everyMs));
        const step = STEPS[Math.floor((n * STEPS.length) / plan.lines)] as string;
        const line: LogLine = { step, text: `${step}: line ${n + 1} of ${plan.lines}` };
        log.append(line);
      }
      log.close();
    } catch (error) {
      // A later attempt took the stream over (STALE_WRITER), or it was settled: this one stops.
      console.warn("build-log: producer stopped:", error instanceof Error ? error.message : String(error));
    }
  }
}
