// The heartbeat rooms of bench/heartbeat.ts: the runtime answers "dokit:ping" with "dokit:pong"
// without waking the object. RawHeartbeatRoom sets the answer by hand
// (`ctx.setWebSocketAutoResponse` in its constructor); DokitHeartbeatRoom is
// `WebSockets({ heartbeat: true })`; DokitSweptRoom adds `HeartbeatSweep`, which closes a socket
// whose last ping is older than SWEEP_TIMEOUT_MS with 3008. Each room sends one frame on connect
// (its identity), echoes `e:<text>` and answers `i:` with its instance's id (bench/worker/app.ts).
//
// Every constructor counts itself in a module-level counter that the Worker's /heartbeat-stats
// route reads without reaching an object: in local workerd the Worker and its objects run in
// one isolate, so the route sees the objects' counts (the measure checks it: the count is 1
// after the first connect), and reading it wakes nothing.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "dokit/lifecycle";
import { HeartbeatSweep, WebSockets } from "dokit/websockets";
import type { Connection } from "dokit/websockets";
import { classify } from "./app";
import { reciprocateClose } from "./raw";

/** The ping the clients send and the pong the runtime answers (dokit's defaults). */
const PING = "dokit:ping";
const PONG = "dokit:pong";
/** DokitSweptRoom's `HeartbeatSweep({ timeoutMs })`: short, so the dead-link measure is quick. */
export const SWEEP_TIMEOUT_MS = 3_000;

/** Constructions per room class since the isolate started. */
const constructions = { raw: 0, dokit: 0, swept: 0 };

/** @returns the constructions of each heartbeat room class so far, in this isolate */
export function heartbeatConstructions(): typeof constructions {
  return { ...constructions };
}

/** What every heartbeat room does with an ordinary message. */
function answer(send: (text: string) => void, message: string | ArrayBuffer, instance: string): void {
  const kind = classify(message);
  if (kind === "echo") send(message as string);
  else if (kind === "instance") send(`i:${instance}`);
}

/** Hand-written: the pong set by the object itself, one identity frame on connect, echo and `i:`. */
export class RawHeartbeatRoom extends DurableObject {
  readonly #instance = crypto.randomUUID();

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    constructions.raw++;
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PING, PONG));
  }

  async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return new Response("ok");
    const id = new URL(request.url).searchParams.get("_pk") || crypto.randomUUID();
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [id]);
    server.send(JSON.stringify({ type: "cf_agent_identity", name: this.ctx.id.toString(), agent: "raw-heartbeat-room" }));
    return new Response(null, { status: 101, webSocket: client });
  }

  webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    answer((text) => ws.send(text), message, this.#instance);
  }

  webSocketClose(ws: WebSocket, code: number, reason: string): void {
    reciprocateClose(ws, code, reason);
  }
}

/** The same with dokit: `WebSockets({ heartbeat: true })`. */
export class DokitHeartbeatRoom extends DurableObject {
  readonly #instance = crypto.randomUUID();
  readonly webSockets = new WebSockets({
    heartbeat: true,
    handlers: { onMessage: (connection: Connection, message) => answer((text) => connection.send(text), message, this.#instance) },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    constructions.dokit++;
  }
}

/** dokit with the server-side sweep: `heartbeat: { sweep: new HeartbeatSweep({ timeoutMs: SWEEP_TIMEOUT_MS }) }`. */
export class DokitSweptRoom extends DurableObject {
  readonly #instance = crypto.randomUUID();
  readonly webSockets = new WebSockets({
    heartbeat: { sweep: new HeartbeatSweep({ timeoutMs: SWEEP_TIMEOUT_MS }) },
    handlers: { onMessage: (connection: Connection, message) => answer((text) => connection.send(text), message, this.#instance) },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    constructions.swept++;
  }
}
