import { DurableObject, RpcTarget } from "cloudflare:workers";
import { Inspector } from "dokit/inspector";
import { Lifecycle } from "dokit/lifecycle";
import { Observability } from "dokit/observability";
import { WebSockets } from "dokit/websockets";
import type { CountMessage, CounterApi } from "./api";

/** What dokit clients may call: the complete remote interface, nothing else of the object. */
export class CounterCallables extends RpcTarget implements CounterApi {
  readonly #counter: Counter;

  constructor(counter: Counter) {
    super();
    this.#counter = counter;
  }

  /** @returns the new count */
  increment(): Promise<number> {
    return this.#counter.increment("dokit");
  }

  /** @returns the current count */
  count(): Promise<number> {
    return this.#counter.count();
  }
}

/**
 * A Durable Object that existed before dokit: its own `fetch` (an HTTP counter
 * and a hand-rolled WebSocket protocol, "increment" in, "count:N" out) and its
 * own `webSocketMessage` / `webSocketClose`. dokit is added beside that code,
 * not instead of it: the object keeps its entry points and hands dokit what is
 * dokit's with one call each.
 */
export class Counter extends DurableObject<Env> {
  // ── Added for dokit: three fields ────────────────────────────────────────
  readonly webSockets: WebSockets = new WebSockets({ callables: new CounterCallables(this) });
  // `delegates` says these entry points are the object's own and call into dokit,
  // so nothing is skipped silently (without it, install throws HANDLER_CONFLICT).
  readonly lifecycle = Lifecycle.install(this, { delegates: ["fetch", "webSocketMessage", "webSocketClose"] })
    .use(this.webSockets)
    // The live inspector at /agents/counter/{name}/__dokit (localhost only: docs/inspector.md).
    .use(new Inspector({ enabled: true, observability: new Observability(), webSockets: this.webSockets }));

  // ── The existing object, with one delegating line per entry point ────────
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    // Existing: sockets the Worker forwards from /counter/{name}/socket are accepted here, as before.
    if (request.headers.get("Upgrade") === "websocket" && url.pathname.endsWith("/socket")) {
      const pair = new WebSocketPair();
      this.ctx.acceptWebSocket(pair[1], ["legacy"]);
      pair[1].send(`count:${await this.count()}`);
      return new Response(null, { status: 101, webSocket: pair[0] });
    }
    // Added: dokit answers what it claims (upgrades from /agents/counter/{name}); undefined otherwise.
    if (url.pathname.startsWith("/agents/")) {
      return (await this.lifecycle.fetch(request)) ?? new Response("Not found", { status: 404 });
    }
    // Existing: GET reads the count, POST increments it.
    if (request.method === "POST") return Response.json({ count: await this.increment("http") });
    return Response.json({ count: await this.count() });
  }

  async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    // Added: `true` when the socket is one dokit accepted.
    if (await this.lifecycle.webSocketMessage(ws, message)) return;
    // Existing: the hand-rolled protocol.
    if (message === "increment") await this.increment("legacy");
    else ws.send("error:unknown command");
  }

  async webSocketClose(ws: WebSocket, code: number, reason: string, wasClean: boolean): Promise<void> {
    if (await this.lifecycle.webSocketClose(ws, code, reason, wasClean)) return;
    ws.close(code, reason);
  }

  /** Existing, and now also what the callables use. @returns the new count */
  async increment(by: CountMessage["by"]): Promise<number> {
    const count = (await this.count()) + 1;
    await this.ctx.storage.put("count", count);
    // Existing clients get the old text message; dokit clients get JSON through broadcast().
    for (const ws of this.ctx.getWebSockets("legacy")) ws.send(`count:${count}`);
    this.webSockets.broadcast({ type: "count", count, by } satisfies CountMessage);
    return count;
  }

  /** @returns the stored count */
  async count(): Promise<number> {
    return (await this.ctx.storage.get<number>("count")) ?? 0;
  }
}
