// The presence rooms (bench/presence.ts): dokit's Presence, and the same presence written by hand
// on the hibernation API. Both speak the wire of docs/presence.md with the same frames and the
// same coalescing: each connection's latest value is held in memory for the tick (50 ms), then
// written to its socket's attachment and sent to every watcher in one frame.
//   client → {"type":"dokit_presence","value"?:V,"watch"?:boolean}
//   server → {"type":"dokit_presence","you":id,"all":[[id,V],…]}  (a new watcher's snapshot)
//            {"type":"dokit_presence","set":[[id,V],…],"left":[id,…]}  (at most one per tick)
// Connect: the identity frame alone (no State). A plain GET answers `ok`.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "dokit/lifecycle";
import { Presence } from "dokit/presence";
import { WebSockets } from "dokit/websockets";
import { reciprocateClose } from "./raw";

/** The tick both rooms hold changes for (dokit's default). */
export const PRESENCE_TICK_MS = 50;
/** The largest value, as JSON, in UTF-8 bytes (dokit's default). */
const MAX_BYTES = 1024;
const PRESENCE = "dokit_presence";

/** The path segments of the presence rooms, and their bindings (bench/worker/worker.ts routes them). */
export const PRESENCE_BINDINGS: Record<string, "PRESENCE_RAW" | "PRESENCE_DOKIT"> = { "presence-raw": "PRESENCE_RAW", "presence-dokit": "PRESENCE_DOKIT" };

/** The room with dokit: Lifecycle + WebSockets + Presence at its defaults. */
export class DokitPresenceRoom extends DurableObject {
  readonly presence = new Presence<unknown>();
  readonly webSockets = new WebSockets({ presence: this.presence });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);

  onRequest(): Response {
    return new Response("ok");
  }
}

/** What a raw socket's attachment holds: its id, whether it watches, its value (absent while not present). */
interface Meta {
  id: string;
  watching?: boolean;
  value?: unknown;
}

/** A change held for the tick: the value as JSON, or `undefined` when the connection leaves. */
interface Held {
  json: string | undefined;
  value: unknown;
}

/** The floor: presence by hand on the hibernation API. */
export class RawPresenceRoom extends DurableObject {
  /** Each socket's attachment, read once per wake and kept in step with what is written. */
  readonly #meta = new Map<WebSocket, Meta>();
  /** This tick's changes, in the order first changed. */
  readonly #held = new Map<WebSocket, Held>();
  #timer: ReturnType<typeof setTimeout> | undefined;

  async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return new Response("ok");
    const id = new URL(request.url).searchParams.get("_pk") || crypto.randomUUID();
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [id]);
    const meta: Meta = { id };
    server.serializeAttachment(meta);
    this.#meta.set(server, meta);
    server.send(JSON.stringify({ type: "cf_agent_identity", name: this.ctx.id.name ?? this.ctx.id.toString(), agent: "raw-presence-room" }));
    return new Response(null, { status: 101, webSocket: client });
  }

  webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    if (typeof message !== "string" || message.charCodeAt(0) !== 123 /* { */) return;
    let frame: Record<string, unknown> | undefined;
    try {
      frame = JSON.parse(message);
    } catch {
      return;
    }
    if (frame?.type !== PRESENCE) return;
    const meta = this.#metaOf(ws);
    const watch = frame.watch;
    if (watch !== undefined && typeof watch !== "boolean") return refuse(ws, "watch must be true or false");
    if (Object.hasOwn(frame, "value")) {
      const value = frame.value;
      if (value === null) this.#leave(ws, meta);
      else {
        const json = JSON.stringify(value);
        if (json.length * 3 > MAX_BYTES && new TextEncoder().encode(json).length > MAX_BYTES) refuse(ws, `Presence value over ${MAX_BYTES} bytes`);
        else this.#hold(ws, json, value);
      }
    }
    // The first presence frame makes a watcher unless it says otherwise; later ones only when they say so.
    const was = meta.watching;
    if (watch === false ? was !== false : watch === true ? was !== true : was === undefined) {
      meta.watching = watch !== false;
      ws.serializeAttachment(meta);
      if (meta.watching) this.#snapshot(ws, meta);
    }
  }

  webSocketClose(ws: WebSocket, code: number, reason: string): void {
    const meta = this.#metaOf(ws);
    this.#leave(ws, meta);
    // A present socket's entry goes at the tick that tells the watchers it left.
    if (meta.value === undefined) this.#meta.delete(ws);
    reciprocateClose(ws, code, reason);
  }

  #metaOf(ws: WebSocket): Meta {
    let meta = this.#meta.get(ws);
    if (!meta) this.#meta.set(ws, (meta = ws.deserializeAttachment() as Meta));
    return meta;
  }

  #hold(ws: WebSocket, json: string | undefined, value: unknown): void {
    this.#held.set(ws, { json, value });
    this.#timer ??= setTimeout(() => this.#flush(), PRESENCE_TICK_MS);
  }

  #leave(ws: WebSocket, meta: Meta): void {
    // Never sent out: nobody heard of it, so nobody is told it left.
    if (meta.value === undefined) this.#held.delete(ws);
    else this.#hold(ws, undefined, undefined);
  }

  /** The tick ends: each held value is written to its socket's attachment, and one frame goes to every watcher. */
  #flush(): void {
    this.#timer = undefined;
    let set = "";
    let left = "";
    for (const [ws, { json, value }] of this.#held) {
      const meta = this.#metaOf(ws);
      const open = ws.readyState === WebSocket.OPEN;
      if (json === undefined) {
        meta.value = undefined;
        if (open) ws.serializeAttachment(meta);
        else this.#meta.delete(ws);
        left += `${left ? "," : ""}${JSON.stringify(meta.id)}`;
      } else if (open) {
        meta.value = value;
        ws.serializeAttachment(meta);
        set += `${set ? "," : ""}[${JSON.stringify(meta.id)},${json}]`;
      }
    }
    this.#held.clear();
    if (!set && !left) return;
    const frame = `{"type":"${PRESENCE}"${set && `,"set":[${set}]`}${left && `,"left":[${left}]`}}`;
    for (const ws of this.ctx.getWebSockets()) {
      if (ws.readyState === WebSocket.OPEN && this.#metaOf(ws).watching) send(ws, frame);
    }
  }

  /** Sends a new watcher everyone present, itself included (held values are the latest). */
  #snapshot(ws: WebSocket, meta: Meta): void {
    let all = "";
    for (const other of this.ctx.getWebSockets()) {
      if (other.readyState !== WebSocket.OPEN) continue;
      const held = this.#held.get(other);
      const json = held ? held.json : JSON.stringify(this.#metaOf(other).value);
      if (json !== undefined) all += `${all ? "," : ""}[${JSON.stringify(this.#metaOf(other).id)},${json}]`;
    }
    send(ws, `{"type":"${PRESENCE}","you":${JSON.stringify(meta.id)},"all":[${all}]}`);
  }
}

function send(ws: WebSocket, frame: string): void {
  try {
    ws.send(frame);
  } catch {}
}

function refuse(ws: WebSocket, reason: string): void {
  send(ws, JSON.stringify({ type: "dokit_error", code: "PRESENCE_REJECTED", error: reason }));
}
