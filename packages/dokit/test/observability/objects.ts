import { DurableObject, RpcTarget } from "cloudflare:workers";
import { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { Callables } from "../../src/callables";
import { Lifecycle, Refusal } from "../../src/lifecycle";
import { McpHandler } from "../../src/mcp";
import { Observability } from "../../src/observability";
import { Queue } from "../../src/queue";
import { Scheduler } from "../../src/schedule";
import { State } from "../../src/state";
import { WebSockets } from "../../src/websockets";

/** The methods clients call on a room. */
class RoomApi extends RpcTarget {
  add(a: number, b: number): number {
    return a + b;
  }
  refuse(): never {
    throw new Refusal("not for you");
  }
  /** Three chunks, then done. */
  count(): ReadableStream<number> {
    let n = 0;
    return new ReadableStream({ pull: (controller) => (n < 3 ? controller.enqueue(++n) : controller.close()) });
  }
}

/** Observability + State + WebSockets + Callables; ?mode=view is readonly; "throw" makes onMessage throw. */
export class ObservedRoom extends DurableObject<Env> {
  readonly state = new State({
    initialState: { count: 0, secret: "s3cret" },
    validate: (value: { count: number; secret: string }) => {
      if (typeof value.count !== "number" || value.count < 0) throw new Error("count must be a non-negative number");
    },
  });
  readonly webSockets: WebSockets = new WebSockets({
    state: this.state,
    callables: new Callables(new RoomApi()),
    readonly: (_c, ctx) => new URL(ctx.request.url).searchParams.get("mode") === "view",
    getConnectionTags: (_c, ctx) => {
      if (new URL(ctx.request.url).searchParams.get("refuse") === "1") throw new Error("no tags for you");
      return [];
    },
    handlers: {
      onMessage: (connection, message) => {
        if (message === "throw") throw new Error("handler failed");
        connection.send(typeof message === "string" ? `echo:${message}` : message);
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(new Observability()).use(this.state).use(this.webSockets);

  async onStart(): Promise<void> {
    // A start hook, so start() runs (and is timed) inside blockConcurrencyWhile.
  }

  onAlarm(): void {}

  /** A server-side change. */
  async bump(): Promise<number> {
    await this.lifecycle.start();
    const next = this.state.set({ ...this.state.get(), count: this.state.get().count + 1 });
    return next.count;
  }

  async armAlarm(): Promise<void> {
    await this.lifecycle.start();
    await this.ctx.storage.setAlarm(Date.now() + 60_000);
  }

  async destroy(): Promise<void> {
    await this.lifecycle.destroy();
  }
}

/** The same room without Observability: nothing is timed, nothing is recorded on connections. */
export class PlainRoom extends DurableObject<Env> {
  readonly webSockets = new WebSockets({ handlers: { onMessage: (connection, message) => connection.send(message) } });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}

/** A Scheduler and a Queue with quick retries: `ok` runs, `flaky` fails once, `boom` always fails. */
export class ObservedJobs extends DurableObject<Env> {
  #flaky = 0;
  readonly scheduler = new Scheduler({
    callbacks: { ok: () => {}, boom: () => Promise.reject(new Error("boom")) },
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    onError: () => {},
  });
  readonly queue = new Queue({
    callbacks: {
      ok: () => {},
      flaky: () => {
        if (this.#flaky++ === 0) throw new Error("first try fails");
      },
    },
    retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.scheduler).use(this.queue).use(new Observability());

  async scheduleOk(): Promise<string> {
    await this.lifecycle.start();
    return (await this.scheduler.set(0, "ok")).id;
  }
  async scheduleBoom(): Promise<string> {
    await this.lifecycle.start();
    return (await this.scheduler.set(0, "boom")).id;
  }
  async scheduleAndCancel(): Promise<string> {
    await this.lifecycle.start();
    const { id } = await this.scheduler.set(60, "ok");
    await this.scheduler.cancel(id);
    return id;
  }
  async pushFlaky(): Promise<string> {
    await this.lifecycle.start();
    return (await this.queue.push("flaky")).id;
  }
}

/** McpHandler with one tool. */
export class ObservedMcp extends DurableObject<Env> {
  readonly mcp = new McpHandler({
    server: () => {
      const server = new McpServer({ name: "observed", version: "1.0.0" });
      server.registerTool("add", { inputSchema: z.object({ a: z.number(), b: z.number() }) }, ({ a, b }) => ({
        content: [{ type: "text", text: String(a + b) }],
      }));
      return server;
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(new Observability()).use(this.mcp);
}
