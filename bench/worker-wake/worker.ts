// Rooms for attributing what dokit's wake costs (bench/wake.ts). Every room answers the bench
// protocol's `e:` (echo) and `i:` (instance id); all but `dokit`, `min`, `floor` and `lean` answer with the
// raw room's own code and add exactly one piece of what dokit does on a wake.
import * as asyncHooks from "node:async_hooks";
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
import { classify } from "../worker/app";
import { RawRoom } from "../worker/raw";
import { objectNamed } from "../worker/address";
import { COMPACT, FloorRoom, LeanRoom } from "./lean";

export { RawRoom } from "../worker/raw";
import { DokitRoom } from "../worker/dokit";

// workerd's node:async_hooks (nodejs_compat) has AsyncResource; the workers types do not declare it.
const { AsyncLocalStorage } = asyncHooks;
type AsyncResource = { runInAsyncScope<This, A extends unknown[], R>(fn: (this: This, ...args: A) => R, thisArg: This, ...args: A): R };
const AsyncResource = (asyncHooks as unknown as { AsyncResource: new (type: string) => AsyncResource }).AsyncResource;

export { DokitRoom, FloorRoom, LeanRoom };

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

/** The raw room, returning `true` from `webSocketMessage` as dokit's entry point does (bench/saturation.ts). */
export class ReturnsTrue extends RawRoom {
  override webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): true {
    super.webSocketMessage(ws, message);
    return true;
  }
}

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

/**
 * Kinds that address a room's class on a second object: what two objects of one class read apart
 * is the placement noise of the wake figures (bench/README.md).
 */
const SECOND_OBJECT: Record<string, string> = { raw2: "RAW", dokit2: "DOKIT" };

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
    const second = SECOND_OBJECT[kind ?? ""];
    const binding = second ?? BINDINGS[kind ?? ""];
    if (!binding || !name) return new Response("no route", { status: 404 });
    const stub = objectNamed(env[binding] as DurableObjectNamespace, second ? `${name}#2` : name);
    if (action === "evict") {
      await ((await import(UNSAFE)) as { default: Unsafe }).default.evict(stub, { webSockets: "hibernate" });
      return new Response("evicted");
    }
    return stub.fetch(request);
  },
};
