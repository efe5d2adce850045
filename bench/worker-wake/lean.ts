// The two lower bounds of a wake (bench/DIAGNOSTICS.md): `floor`, what dokit's first
// message after a wake must do, written by hand; `lean`, the dokit room's code on a hand-written
// lean composition. The wake worker (worker.ts here) measures
// them beside raw and dokit; the bench's worker serves them for `node bench/run.ts --dokit-room=lean|floor`.
import { DurableObject } from "cloudflare:workers";
import { BenchCallables, classify, INITIAL_STATE } from "../worker/app";
import { reciprocateClose } from "../worker/raw";

/** The prefix of dokit's compact attachment (websockets/attachment.ts), which the floor room writes as dokit does. */
export const COMPACT = "\u0000dokit\u0000";
const FLOOR_ATTACHMENT = Symbol();
const floorPrototypes = new WeakMap<object, object>();
const floorMembers: PropertyDescriptorMap = {
  id: {
    get(this: { [FLOOR_ATTACHMENT]: string }) {
      return (JSON.parse(this[FLOOR_ATTACHMENT].slice(COMPACT.length)) as { id: string }).id;
    },
    configurable: true,
  },
  setState: { value() {}, configurable: true },
};
/** @returns whether the socket carries the floor's (dokit's) attachment, read once per wake and kept on the socket, as dokit's `isDokitSocket` */
function isFloorSocket(ws: WebSocket): boolean {
  const socket = ws as unknown as { [FLOOR_ATTACHMENT]?: string };
  if (socket[FLOOR_ATTACHMENT] !== undefined) return true;
  const attachment: unknown = ws.deserializeAttachment();
  if (typeof attachment !== "string" || !attachment.startsWith(COMPACT)) return false;
  socket[FLOOR_ATTACHMENT] = attachment;
  return true;
}

/** Accepts a socket as the floor and lean rooms do: dokit's compact attachment, then its two connect frames. A plain GET answers `ok`, as in every bench room. */
function acceptFloorSocket(ctx: DurableObjectState, request: Request, agent: string): Response {
  if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return new Response("ok");
  const id = new URL(request.url).searchParams.get("_pk") || crypto.randomUUID();
  const { 0: client, 1: server } = new WebSocketPair();
  ctx.acceptWebSocket(server, [id]);
  server.serializeAttachment(COMPACT + JSON.stringify({ id, tags: [id], uri: request.url, readonly: false, protocol: true }));
  server.send(JSON.stringify({ type: "cf_agent_identity", name: ctx.id.toString(), agent, stateFollows: true }));
  server.send(JSON.stringify({ type: "cf_agent_state", state: { count: 0 } }));
  return new Response(null, { status: 101, webSocket: client });
}

/**
 * Reads a room's state row from SQLite, first making its table and storing `initial` there, as the
 * raw room does on connect (`#getState` in bench/worker/raw.ts): the floor and lean rooms keep their
 * state so, so that their objects have a database to open on a wake as raw's and dokit's do.
 * @returns the stored value
 */
function loadStateRow(ctx: DurableObjectState, table: string, initial: unknown): unknown {
  const sql = ctx.storage.sql;
  sql.exec(`CREATE TABLE IF NOT EXISTS ${table} (id TEXT PRIMARY KEY, value TEXT)`);
  const row = sql.exec(`SELECT value FROM ${table} WHERE id = 'state'`).toArray()[0];
  if (row) return JSON.parse(row.value as string);
  sql.exec(`INSERT INTO ${table} (id, value) VALUES ('state', ?)`, JSON.stringify(initial));
  return initial;
}

/** Makes a floor socket a Connection (the prototype with its members) on its first event in a wake. @returns false for a socket that is not the room's */
function asFloorConnection(ws: WebSocket): boolean {
  if ("setState" in ws) return true;
  if (!isFloorSocket(ws)) return false;
  const base: object = Object.getPrototypeOf(ws);
  let prototype = floorPrototypes.get(base);
  if (!prototype) floorPrototypes.set(base, (prototype = Object.create(base, floorMembers) as object));
  Object.setPrototypeOf(ws, prototype);
  return true;
}

/**
 * The floor of a wake (bench/DIAGNOSTICS.md): no
 * Lifecycle, no capabilities, written by hand, doing only what dokit's first message after a
 * wake must: read the socket's attachment (dokit's compact string, written on accept), make the
 * socket a Connection (a prototype with its members), and call the room's handler, an arrow
 * function as users write it. It enters no context: dokit enters the one `getCurrentAgent()` reads
 * only in a Worker whose bundle can read it, and neither the wake worker nor the bench's does
 * (docs/lifecycle.md, "`getCurrentAgent()`"). Its broadcast, like dokit's, sends
 * only to sockets carrying that attachment.
 */
export class FloorRoom extends DurableObject {
  readonly #instance = crypto.randomUUID();
  readonly handlers = {
    onMessage: (connection: WebSocket, message: string | ArrayBuffer) => {
      const kind = classify(message);
      if (kind === "echo") connection.send(message);
      // A broadcast skips sockets that are not the room's, as dokit's does (each attachment read once per wake).
      else if (kind === "broadcast") {
        for (const other of this.ctx.getWebSockets()) if (isFloorSocket(other)) other.send(message);
      } else if (kind === "instance") connection.send(`i:${this.#instance}`);
    },
  };

  fetch(request: Request): Response {
    loadStateRow(this.ctx, "floor_state", INITIAL_STATE); // the object holds a state table, as the raw, lean and dokit rooms' objects do
    return acceptFloorSocket(this.ctx, request, "floor-room");
  }

  webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    if (asFloorConnection(ws)) this.handlers.onMessage(ws, message);
  }

  webSocketClose(ws: WebSocket, code: number, reason: string): void {
    reciprocateClose(ws, code, reason);
  }
}

// ---------------------------------------------------------------- lean: the same API, built lean

/**
 * `lean`: the dokit room's code as users write it (capabilities built in field initializers,
 * `LeanLifecycle.install(this).use(state).use(webSockets)`), served by a hand-written composition that
 * does only what the floor does plus the wiring: each capability is a plain object, `use()`
 * calls its `attach`, a claim is a property set on the lifecycle (a frame type maps to the
 * capability that handles it, a method not a closure), and the entry points sit on the class
 * prototype. It leaves out what dokit's Lifecycle and capabilities add on every wake: claim
 * checks (conflicts, reserved names), start hooks, events, per-event error handling, the
 * connection flags. So it is the lower bound for this API, not a replacement (bench/DIAGNOSTICS.md).
 */
const LEAN = Symbol();
type LeanFrameClaim = { frame(connection: WebSocket, frame: Record<string, unknown>): void };
type LeanCapability = { attach(lifecycle: LeanLifecycle): void };
type LeanHandlers = { onMessage(connection: WebSocket, message: string | ArrayBuffer): void };

class LeanLifecycle {
  readonly used: LeanCapability[] = [];
  readonly frames: Record<string, LeanFrameClaim> = Object.create(null);
  sockets: LeanWebSockets | undefined;
  readonly ctx: DurableObjectState;
  constructor(readonly host: DurableObject) {
    // SAFETY: `ctx` is the platform's protected field on every DurableObject (as dokit's Lifecycle reads it).
    this.ctx = (host as unknown as { ctx: DurableObjectState }).ctx;
  }

  static install(host: DurableObject): LeanLifecycle {
    const lifecycle = new LeanLifecycle(host);
    (host as unknown as Record<symbol, LeanLifecycle>)[LEAN] = lifecycle;
    return lifecycle;
  }

  use(capability: LeanCapability): this {
    if (!this.used.includes(capability)) {
      this.used.push(capability);
      capability.attach(this);
    }
    return this;
  }
}

/** Keeps its value in SQLite as the raw room does (a table made on the first connect), so `lean`'s objects hold a table as raw's and dokit's do. */
class LeanState implements LeanCapability, LeanFrameClaim {
  #value: unknown;
  #loaded = false;
  #ctx: DurableObjectState | undefined;
  constructor(readonly options: { initialState: unknown; onChanged(state: unknown, source: unknown): void }) {}
  attach(lifecycle: LeanLifecycle): void {
    this.#ctx = lifecycle.ctx;
    lifecycle.frames.cf_agent_state = this;
  }
  get(): unknown {
    if (!this.#loaded) {
      this.#value = loadStateRow(this.#ctx as DurableObjectState, "lean_state", this.options.initialState);
      this.#loaded = true;
    }
    return this.#value;
  }
  frame(connection: WebSocket, frame: Record<string, unknown>): void {
    this.get();
    (this.#ctx as DurableObjectState).storage.sql.exec("INSERT OR REPLACE INTO lean_state (id, value) VALUES ('state', ?)", JSON.stringify(frame.state));
    this.#value = frame.state;
    this.options.onChanged(this.#value, connection);
  }
}

class LeanCallables implements LeanCapability, LeanFrameClaim {
  constructor(readonly target: BenchCallables) {}
  attach(lifecycle: LeanLifecycle): void {
    lifecycle.frames.rpc = this;
  }
  frame(connection: WebSocket, frame: Record<string, unknown>): void {
    const result = frame.method === "echo" && Array.isArray(frame.args) ? this.target.echo(frame.args[0]) : undefined;
    connection.send(JSON.stringify({ type: "rpc", id: frame.id, success: true, done: true, result }));
  }
}

class LeanWebSockets implements LeanCapability {
  #lifecycle: LeanLifecycle | undefined;
  readonly #callables: LeanCallables | undefined;
  constructor(readonly options: { state?: LeanState; callables?: BenchCallables; handlers: LeanHandlers }) {
    if (options.callables) this.#callables = new LeanCallables(options.callables);
  }
  attach(lifecycle: LeanLifecycle): void {
    this.#lifecycle = lifecycle;
    if (this.options.state) lifecycle.use(this.options.state);
    if (this.#callables) lifecycle.use(this.#callables);
    lifecycle.sockets = this;
  }
  message(ws: WebSocket, message: string | ArrayBuffer): void {
    if (!asFloorConnection(ws)) return;
    if (typeof message === "string" && message.charCodeAt(0) === 123 /* { */) {
      const frame = JSON.parse(message) as Record<string, unknown>;
      const claim = typeof frame.type === "string" ? (this.#lifecycle as LeanLifecycle).frames[frame.type] : undefined;
      if (claim) return claim.frame(ws, frame);
    }
    this.options.handlers.onMessage(ws, message);
  }
  broadcast(message: string | ArrayBuffer): void {
    for (const other of (this.#lifecycle as LeanLifecycle).ctx.getWebSockets()) if (isFloorSocket(other)) other.send(message);
  }
}

/** The dokit room's code (bench/worker/dokit.ts), repeated on purpose, on the lean composition. */
export class LeanRoom extends DurableObject {
  readonly #instance = crypto.randomUUID();
  readonly state: LeanState = new LeanState({
    initialState: INITIAL_STATE,
    onChanged: (state) => this.webSockets.broadcast(JSON.stringify({ type: "cf_agent_state", state })),
  });
  readonly webSockets: LeanWebSockets = new LeanWebSockets({
    state: this.state,
    callables: new BenchCallables(),
    handlers: {
      onMessage: (connection, message) => {
        const kind = classify(message);
        if (kind === "echo") connection.send(message);
        else if (kind === "broadcast") this.webSockets.broadcast(message);
        else if (kind === "instance") connection.send(`i:${this.#instance}`);
      },
    },
  });
  readonly lifecycle = LeanLifecycle.install(this).use(this.state).use(this.webSockets);

  fetch(request: Request): Response {
    this.state.get(); // reads (and first stores) its state on connect, as the raw and dokit rooms do
    return acceptFloorSocket(this.ctx, request, "lean-room");
  }
}

// The entry points, on the class prototype once: they find the instance's lifecycle and forward.
Object.defineProperties(LeanRoom.prototype, {
  webSocketMessage: {
    value(this: Record<symbol, LeanLifecycle>, ws: WebSocket, message: string | ArrayBuffer): void {
      this[LEAN]?.sockets?.message(ws, message);
    },
  },
  webSocketClose: { value: (ws: WebSocket, code: number, reason: string) => reciprocateClose(ws, code, reason) },
});
