// Rooms for attributing what dokit's wake costs (bench/wake.ts). Every room answers the bench
// protocol's `e:` (echo) and `i:` (instance id); all but `dokit`, `min`, `floor` and `lean` answer with the
// raw room's own code and add exactly one piece of what dokit does on a wake.
import { AsyncLocalStorage, AsyncResource } from "node:async_hooks";
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../packages/dokit/src/lifecycle";
import { WebSockets } from "../../packages/dokit/src/websockets";
import { BenchCallables, classify, INITIAL_STATE } from "../worker/app";
import { RawRoom, reciprocateClose } from "../worker/raw";
import { objectNamed } from "../worker/address";

export { RawRoom } from "../worker/raw";
import { DokitRoom } from "../worker/dokit";

export { DokitRoom };

/** Lifecycle + WebSockets with an echo handler: no State, no callables. */
export class MinimalRoom extends DurableObject {
  readonly #instance = crypto.randomUUID();
  readonly webSockets: WebSockets = new WebSockets({
    handlers: {
      onMessage: (connection, message) => {
        const kind = classify(message);
        if (kind === "echo") connection.send(message);
        else if (kind === "broadcast") this.webSockets.broadcast(message);
        else if (kind === "instance") connection.send(`i:${this.#instance}`);
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}

// The raw room's code again as a class of its own (twin.ts): what the wake measure reads for
// identical code, the noise floor of a room's difference to raw (bench/README.md).
export { RawTwin } from "./twin";

/** The raw room with a Lifecycle installed (its alarm and webSocketError entry points); the raw code keeps the socket events. */
export class LifecycleOnly extends RawRoom {
  readonly lifecycle = Lifecycle.install(this, { delegates: ["fetch", "webSocketMessage", "webSocketClose"] });
}

/** LifecycleOnly, plus a WebSockets built with the object (not installed): the constructors' share. */
export class Constructed extends RawRoom {
  readonly webSockets = new WebSockets({ handlers: { onMessage: () => {} } });
  readonly lifecycle = Lifecycle.install(this, { delegates: ["fetch", "webSocketMessage", "webSocketClose"] });
}

const DECORATED = Symbol();
const decorations: PropertyDescriptorMap = Object.fromEntries(
  ["id", "uri", "tags", "state"].map((name) => [name, { get: () => undefined, configurable: true }]),
);
decorations.setState = { value() {}, configurable: true };

/** The raw room, decoding the socket's attachment and defining five properties on it on its first message (as a Connection is made). */
export class AttachmentDecoded extends RawRoom {
  override webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    const socket = ws as unknown as Record<symbol, unknown>;
    if (!socket[DECORATED]) {
      socket[DECORATED] = ws.deserializeAttachment();
      Object.defineProperties(ws, decorations);
    }
    return super.webSocketMessage(ws, message);
  }
}

const storage = new AsyncLocalStorage<object>();

/** The raw room, handling each message inside an AsyncLocalStorage run. */
export class ContextRun extends RawRoom {
  override webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    return storage.run({ agent: this, connection: ws }, () => super.webSocketMessage(ws, message));
  }
}

const RUNNER = Symbol();
type Runner = (fn: (message: string | ArrayBuffer) => void, message: string | ArrayBuffer) => void;

/** The raw room, handling each message through a context snapshot built on the socket's first message (as dokit's contextRunner). */
export class ContextSnapshot extends RawRoom {
  override webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    const socket = ws as unknown as Record<symbol, Runner>;
    const run = (socket[RUNNER] ??= storage.run(Object.freeze({ agent: this, connection: ws }), AsyncLocalStorage.snapshot) as Runner);
    return run((m) => super.webSocketMessage(ws, m), message);
  }
}

const RESOURCE = Symbol();
/** The raw room, handling each message through an `AsyncResource` made in the socket's context on its first message (`runInAsyncScope`). */
export class ContextResource extends RawRoom {
  override webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    const socket = ws as unknown as Record<symbol, AsyncResource>;
    const resource = (socket[RESOURCE] ??= storage.run(Object.freeze({ agent: this, connection: ws }), () => new AsyncResource("dokit")));
    resource.runInAsyncScope(RawRoom.prototype.webSocketMessage, this, ws, message);
  }
}

const BOUND = Symbol();
/** `AsyncLocalStorage.bind`, which the declaration dokit ships (src/node-async-hooks.d.ts) leaves out. */
type Bind = { bind<F>(fn: F): F };
/** The raw room, handling each message through a function bound to the socket's context on its first message (`AsyncLocalStorage.bind`). */
export class ContextBound extends RawRoom {
  override webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    const socket = ws as unknown as Record<symbol, (room: RawRoom, ws: WebSocket, message: string | ArrayBuffer) => void>;
    const bound = (socket[BOUND] ??= storage.run(Object.freeze({ agent: this, connection: ws }), () => (AsyncLocalStorage as unknown as Bind).bind(callRaw)));
    bound(this, ws, message);
  }
}
const callRaw = (room: RawRoom, ws: WebSocket, message: string | ArrayBuffer) => RawRoom.prototype.webSocketMessage.call(room, ws, message);

/** The raw room with an async `webSocketMessage`: returns a promise already settled (bench/saturation.ts). */
export class AsyncReturn extends RawRoom {
  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    return super.webSocketMessage(ws, message);
  }
}

/** The raw room, handling each message after three awaits (bench/saturation.ts). */
export class Awaits extends RawRoom {
  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    await null;
    await null;
    await null;
    return super.webSocketMessage(ws, message);
  }
}

/** The raw room, handling each message inside an AsyncLocalStorage run, after three awaits (bench/saturation.ts). */
export class ContextAwaits extends RawRoom {
  override webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    return storage.run({ agent: this, connection: ws }, async () => {
      await null;
      await null;
      await null;
      return super.webSocketMessage(ws, message);
    });
  }
}

/** The prefix of dokit's compact attachment (websockets/attachment.ts), which the floor room writes as dokit does. */
const COMPACT = "\u0000dokit\u0000";
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
type Handler = (connection: WebSocket, message: string | ArrayBuffer) => void;
const callHandler = (handlers: { onMessage: Handler }, connection: WebSocket, message: string | ArrayBuffer) => handlers.onMessage(connection, message);

/** Accepts a socket as the floor and lean rooms do: dokit's compact attachment, then its two connect frames. */
function acceptFloorSocket(ctx: DurableObjectState, request: Request, agent: string): Response {
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
 * The floor of a wake as issue 19 defines dokit's (bench/README.md, "The floor of a wake"): no
 * Lifecycle, no capabilities, written by hand, doing only what dokit's first message after a
 * wake must: read the socket's attachment (dokit's compact string, written on accept), make the
 * socket a Connection (a prototype with its members), and call the room's handler, an arrow
 * function as users write it, inside an `AsyncLocalStorage` run (the context `getCurrentAgent()`
 * reads). Its broadcast, like dokit's, sends only to sockets carrying that attachment.
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
    if (!asFloorConnection(ws)) return;
    storage.run(Object.freeze({ agent: this, connection: ws, request: undefined, props: undefined }), callHandler, this.handlers, ws, message);
  }

  webSocketClose(ws: WebSocket, code: number, reason: string): void {
    reciprocateClose(ws, code, reason);
  }
}

/** The raw room, returning `true` from `webSocketMessage` as dokit's entry point does (bench/saturation.ts). */
export class ReturnsTrue extends RawRoom {
  override webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): true {
    super.webSocketMessage(ws, message);
    return true;
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
 * connection flags. So it is the lower bound for this API, not a replacement (bench/README.md,
 * "The same API, built lean").
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
    const lifecycle = this.#lifecycle as LeanLifecycle;
    const scope = Object.freeze({ agent: lifecycle.host, connection: ws, request: undefined, props: undefined });
    if (typeof message === "string" && message.charCodeAt(0) === 123 /* { */) {
      const frame = JSON.parse(message) as Record<string, unknown>;
      const claim = typeof frame.type === "string" ? lifecycle.frames[frame.type] : undefined;
      if (claim) return storage.run(scope, () => claim.frame(ws, frame));
    }
    storage.run(scope, callHandler, this.options.handlers, ws, message);
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

// ---------------------------------------------------------------- construct: a wake's JavaScript alone

type RoomEnv = ConstructorParameters<typeof RawRoom>[1];
/** The rooms `bench/construct.ts` builds, by the names the bench uses. */
const CONSTRUCTED_ROOMS: Record<string, new (ctx: DurableObjectState, env: RoomEnv) => object> = {
  raw: RawRoom,
  floor: FloorRoom,
  lean: LeanRoom,
  min: MinimalRoom,
  dokit: DokitRoom,
  context: ContextRun,
  snapshot: ContextSnapshot,
  resource: ContextResource,
  bound: ContextBound,
};

/** @returns the class `bench/construct.ts` names `kind` */
function constructedRoom(kind: string): (typeof CONSTRUCTED_ROOMS)[string] {
  const Room = CONSTRUCTED_ROOMS[kind];
  if (!Room) throw new Error(`no room ${kind}`);
  return Room;
}

/**
 * `bench/construct.ts`: the JavaScript a wake runs, without the runtime around it. `run` builds a
 * room's object `count` times on this object's state, and hands each one message (`x:`, which
 * every room ignores) on one socket, inside one call (or makes the same passes building nothing,
 * the baseline the bench subtracts). Before each object the socket loses what a
 * room left on it (symbol-keyed properties, a changed prototype), as a fresh wrapper after a wake
 * has none of it. The rooms' classes are built directly, not through the wrapper wrangler's local
 * dev adds around exported classes (bench/worker/address.ts).
 */
export class ConstructProbe extends DurableObject {
  #socket: WebSocket | undefined;
  /** The socket's own prototype, before any room changed it. */
  #base: object | undefined;
  /** The client end, kept so the pair stays open. */
  #keep: WebSocket | undefined;
  #flushBuffer: Uint8Array | undefined;
  #flushed = 0;

  /**
   * @param build - false: the same loop without building or messaging (the baseline a timing subtracts)
   * @param flush - bytes of a buffer read (one byte per 64) before each object, so that it meets
   *   caches filled by other work, as a wake does (0: none)
   * @returns the number of objects built (or of passes made)
   */
  run(kind: string, count: number, build: boolean, flush: number): number {
    const Room = constructedRoom(kind);
    // Filled, so its pages are its own (untouched pages of zeros can all map one shared page).
    if (flush > 0 && this.#flushBuffer?.length !== flush) this.#flushBuffer = new Uint8Array(flush).fill(1);
    const buffer = flush > 0 ? this.#flushBuffer : undefined;
    let passes = 0;
    let sum = 0;
    for (let i = 0; i < count; i++) {
      if (buffer) for (let k = 0; k < buffer.length; k += 64) sum += buffer[k] as number;
      const ws = this.#freshSocket();
      if (build) {
        const room = new Room(this.ctx, this.env as RoomEnv) as { webSocketMessage(ws: WebSocket, message: string): unknown };
        room.webSocketMessage(ws, "x:");
      }
      passes++;
    }
    this.#flushed = sum; // kept, so the reads are not dropped
    return passes;
  }

  /**
   * `bench/construct.ts --messages`: one room's object, built once, handed `count` messages on
   * the probe socket in one call (or, with `build` false, the same loop handing none).
   * @returns the number of messages handed (or of passes made)
   */
  messages(kind: string, count: number, message: string, build: boolean): number {
    const Room = constructedRoom(kind);
    const ws = this.#freshSocket();
    const room = new Room(this.ctx, this.env as RoomEnv) as { webSocketMessage(ws: WebSocket, message: string): unknown };
    let passes = 0;
    for (let i = 0; i < count; i++) {
      if (build) room.webSocketMessage(ws, message);
      passes++;
    }
    return passes;
  }

  /** @returns the probe socket without what a room left on it (symbol-keyed properties, a changed prototype), as a fresh wrapper after a wake */
  #freshSocket(): WebSocket {
    const ws = this.#probeSocket();
    const socket = ws as unknown as Record<symbol, unknown>;
    for (const key of Object.getOwnPropertySymbols(socket)) delete socket[key];
    if (Object.getPrototypeOf(ws) !== this.#base) Object.setPrototypeOf(ws, this.#base as object);
    return ws;
  }

  /** One socket, accepted here with dokit's compact attachment (as the floor and lean rooms write it). */
  #probeSocket(): WebSocket {
    if (this.#socket) return this.#socket;
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, ["probe"]);
    client.accept();
    server.serializeAttachment(COMPACT + JSON.stringify({ id: "probe", tags: ["probe"], uri: null, readonly: false, protocol: true }));
    this.#base = Object.getPrototypeOf(server) as object;
    this.#keep = client;
    return (this.#socket = server);
  }
}

type Unsafe = { evict(stub: DurableObjectStub, options: { webSockets: "hibernate" | "close" }): Promise<void> };
const UNSAFE = ["workerd", "unsafe"].join(":");

const BINDINGS: Record<string, string> = {
  raw: "RAW",
  rawtwin: "RAWTWIN",
  dokit: "DOKIT",
  min: "MIN",
  lifecycle: "LIFECYCLE",
  constructed: "CONSTRUCTED",
  attachment: "ATTACHMENT",
  context: "CONTEXT",
  snapshot: "SNAPSHOT",
  async: "ASYNC",
  await: "AWAIT",
  contextawait: "CONTEXTAWAIT",
  floor: "FLOOR",
  lean: "LEAN",
  true: "TRUE",
  resource: "RESOURCE",
  bound: "BOUND",
};

export default {
  // /room/{kind}/{name}: forwarded to the object; /evict/{kind}/{name}: evicted as hibernation does.
  async fetch(request: Request, env: Record<string, DurableObjectNamespace>): Promise<Response> {
    const url = new URL(request.url);
    const [, action, kind, name] = url.pathname.split("/");
    // /construct/{kind}/{count}?build=0|1&flush=<bytes>: bench/construct.ts
    if (action === "construct") {
      const probe = objectNamed(env.PROBE as DurableObjectNamespace<ConstructProbe>, "construct");
      const { searchParams: query } = url;
      const build = query.get("build") !== "0";
      if (query.has("message")) return new Response(String(await probe.messages(kind ?? "", Number(name), query.get("message") ?? "", build)));
      return new Response(String(await probe.run(kind ?? "", Number(name), build, Number(query.get("flush") ?? 0))));
    }
    const binding = BINDINGS[kind ?? ""];
    if (!binding || !name) return new Response("no route", { status: 404 });
    const stub = objectNamed(env[binding] as DurableObjectNamespace, name);
    if (action === "evict") {
      await ((await import(UNSAFE)) as { default: Unsafe }).default.evict(stub, { webSockets: "hibernate" });
      return new Response("evicted");
    }
    return stub.fetch(request);
  },
};
