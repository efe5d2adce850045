import { answerUnclaimedRpc, type RemoteMethods, serveRpc, TargetMethods } from "../callables/serve";
import type { Capability, Claims, SocketOwner } from "../lifecycle/capability";
import type { Connection, ConnectionContext } from "../lifecycle/connection";
import { type CurrentAgent, runInContext } from "../lifecycle/context";
import { DokitError } from "../lifecycle/errors";
import type { Lifecycle } from "../lifecycle/lifecycle";
import {
  CAPNWEB,
  CLOSE_DESTROYED,
  CLOSE_INTERNAL_ERROR,
  CONNECTION_ID_PARAM,
  IDENTITY,
  isStateFrame,
  RPC,
  STATE,
  TRANSPORT_PARAM,
} from "../protocol/frames";
import type { Internal } from "./attachment";
import { asConnection, initAttachment, internalOf, updateInternal } from "./connection";
import { connectionTags, MAX_TAG_LENGTH } from "./tags";

/** Connection handlers. They run in the object's invocation context (`getCurrentAgent()`). */
export interface WebSocketHandlers {
  /** After the upgrade is accepted and the connect frames are sent. `ctx.request` is the upgrade request. */
  onConnect?(connection: Connection, ctx: ConnectionContext): void | Promise<void>;
  /** For each message that is not an Agents protocol frame. An added handler returns `true` to claim it. */
  onMessage?(connection: Connection, message: string | ArrayBuffer): boolean | void | Promise<boolean | void>;
  /** When the connection closes. */
  onClose?(connection: Connection, code: number, reason: string, wasClean: boolean): void | Promise<void>;
  /** When the connection fails mid-session. */
  onError?(connection: Connection, error: unknown): void | Promise<void>;
}

/** What WebSockets needs of a synced state: its current value. A `State` from `dokit/state` fits. */
export interface SyncedState {
  /** @returns the current value */
  get(): unknown;
}

/** A per-connection decision made when the connection is accepted. */
export type ConnectionDecision = (connection: Connection, ctx: ConnectionContext) => boolean | Promise<boolean>;

/** The Cap'n Web transport, from `dokit/capnweb` (opt-in, so other bundles do not carry it). */
export interface CapnwebTransport {
  /** Accepts a Cap'n Web upgrade for these WebSockets. */
  accept(request: Request, webSockets: WebSockets, callables: RemoteMethods | undefined): Response | Promise<Response>;
}

/** Options of {@link WebSockets}. */
export interface WebSocketsOptions {
  /** Connection handlers: `onConnect`, `onMessage`, `onClose`, `onError`. */
  handlers?: WebSocketHandlers;
  /** A State capability to sync with clients (installed with the WebSockets when not used already). */
  state?: SyncedState;
  /** An `RpcTarget` whose methods clients call (or a `Callables` built from one). */
  callables?: object;
  /** Labels each connection when it is accepted (at most 9 tags; the id is the first). */
  getConnectionTags?: (connection: Connection, ctx: ConnectionContext) => string[] | Promise<string[]>;
  /** Decides whether a connection may change the synced state. */
  readonly?: ConnectionDecision;
  /** `true` (default), `false` (drive the connect sequence yourself), or a per-connection decision. */
  protocol?: boolean | ConnectionDecision;
  /** Enables the Cap'n Web transport: `import { capnweb } from "dokit/capnweb"`. */
  capnweb?: CapnwebTransport;
}

/** An identity for `sendIdentity` / `sendConnectFrames`; defaults to the object's name and kebab class. */
export interface Identity {
  name?: string;
  agent?: string;
}

type Decisions = Pick<Internal, "tags" | "readonly" | "protocol">;

const OPEN = 1;

/**
 * Accepts WebSocket upgrades with the hibernation API, tracks and tags
 * connections, and speaks the Agents protocol, so `useAgent` and `AgentClient`
 * work against a plain Durable Object.
 */
export class WebSockets implements Capability {
  readonly capabilityName = "WebSockets";
  readonly #options: WebSocketsOptions;
  readonly #handlers: WebSocketHandlers[] = [];
  /** The callables option: a `Callables` capability, or the methods of a bare target (served here). */
  readonly #callables: RemoteMethods | undefined;
  #lifecycle: Lifecycle | undefined;
  /** Connections inside their connect sequence: left out of broadcasts. */
  readonly #connecting = new WeakSet<WebSocket>();
  /** Connections closed by the server (their readyState may lag). */
  readonly #closed = new WeakSet<WebSocket>();
  /** Non-hibernating connections (Cap'n Web sessions), by id. */
  readonly #live = new Map<string, Connection>();

  /** @param options - handlers, state, callables, tags, readonly and protocol decisions */
  constructor(options: WebSocketsOptions = {}) {
    this.#options = options;
    const callables = options.callables;
    // A `Callables` from dokit/callables is installed as it is; a bare target is served here.
    if (callables) this.#callables = isCapability<RemoteMethods>(callables) ? callables : new TargetMethods(callables);
  }

  /** The lifecycle this capability was installed on. */
  get lifecycle(): Lifecycle {
    if (!this.#lifecycle) throw notInstalled();
    return this.#lifecycle;
  }

  attach(claims: Claims): void {
    this.#lifecycle = claims.lifecycle;
    const state = this.#options.state;
    if (state && isCapability(state)) claims.use(state);
    const callables = this.#callables;
    if (callables) {
      if (isCapability(callables)) claims.use(callables);
      else serveRpc(claims, callables);
    }
    claims.catchAllUpgrade((request) => this.#accept(request));
    claims.sockets(this.#owner);
    claims.onDestroy(() => {
      for (const connection of this.getConnections()) this.#close(connection, CLOSE_DESTROYED, "Durable Object destroyed");
    });
  }

  // ---------------------------------------------------------------- accepting

  async #accept(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.searchParams.get(TRANSPORT_PARAM) === CAPNWEB) {
      if (this.#options.capnweb) return this.#options.capnweb.accept(request, this, this.#callables);
      return new Response(
        'Cap\'n Web transport not enabled: import { capnweb } from "dokit/capnweb", then new WebSockets({ ..., capnweb })',
        { status: 400 },
      );
    }
    const id = url.searchParams.get(CONNECTION_ID_PARAM) || crypto.randomUUID();
    if (id.length > MAX_TAG_LENGTH) return new Response("Invalid connection id", { status: 400 });

    const { 0: client, 1: server } = new WebSocketPair();
    const ctx: ConnectionContext = { request };
    const connection = initAttachment(server, { id, tags: [id], uri: request.url, readonly: false, protocol: true });
    const decided = await this.#decide(connection, ctx);
    this.lifecycle.ctx.acceptWebSocket(server, decided.tags);
    try {
      await this.#open(connection, ctx, decided);
    } catch (error) {
      console.error(`dokit: onConnect failed for connection ${id}; closing it with ${CLOSE_INTERNAL_ERROR}`, error);
      this.#close(connection, CLOSE_INTERNAL_ERROR, "Internal error");
    }
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Stores the decisions, sends the connect frames (out of broadcasts meanwhile), runs `onConnect`. */
  async #open(connection: Connection, ctx: ConnectionContext, decided: Decisions): Promise<void> {
    // The attachment already holds the defaults; write it again only when a decision differs.
    if (decided.tags.length > 1 || decided.readonly || !decided.protocol) updateInternal(connection, decided);
    this.#connecting.add(connection);
    try {
      if (this.#options.protocol !== false) this.sendConnectFrames(connection);
    } finally {
      this.#connecting.delete(connection);
    }
    await this.#run(connection, (handlers) => handlers.onConnect?.(connection, ctx), ctx.request);
  }

  /** Calls every handler set (added ones first) in the connection's invocation context. */
  #run(connection: Connection, call: (handlers: WebSocketHandlers) => unknown, request?: Request): Promise<void> {
    const scope: Partial<CurrentAgent> = { agent: this.lifecycle.host, connection };
    if (request) scope.request = request;
    return runInContext(scope, async () => {
      for (const handlers of this.#chain()) await call(handlers);
    });
  }

  /** The per-connection decisions of the options: tags, readonly, protocol. */
  async #decide(connection: Connection, ctx: ConnectionContext): Promise<Decisions> {
    const options = this.#options;
    const tags = connectionTags(connection.id, options.getConnectionTags ? await options.getConnectionTags(connection, ctx) : []);
    const readonly = (await options.readonly?.(connection, ctx)) === true;
    const protocol = typeof options.protocol === "function" ? (await options.protocol(connection, ctx)) !== false : true;
    return { tags, readonly, protocol };
  }

  // ------------------------------------------------------------ socket events

  readonly #owner: SocketOwner = {
    message: async (ws, message) => {
      const connection = asConnection(ws);
      if (!connection) return false;
      await runInContext({ agent: this.lifecycle.host, connection }, () => this.dispatch(connection, message));
      return true;
    },
    close: async (ws, code, reason, wasClean) => {
      const connection = asConnection(ws);
      if (!connection) return false;
      this.#closed.add(ws);
      try {
        await this.disconnect(connection, code, reason, wasClean);
      } finally {
        // Reciprocate the client's close with the same code (1005/1006/1015 cannot be sent).
        try {
          if (code === 1005 || code === 1006 || code === 1015) ws.close();
          else ws.close(code, reason);
        } catch {
          // Already closed (the runtime may have replied for us).
        }
      }
      return true;
    },
    error: async (ws, error) => {
      const connection = asConnection(ws);
      if (!connection) return false;
      await this.#run(connection, (handlers) => handlers.onError?.(connection, error));
      return true;
    },
    broadcastProtocol: (frame, except) => this.#broadcastProtocol(frame, except),
    isReadonly: (connection) => this.isReadonly(connection),
  };

  /**
   * Dispatches one incoming message: a text frame is parsed once and its `type`
   * looked up in the dispatch table; everything else goes to the handler chain.
   * Transports other than hibernating sockets (Cap'n Web's pipe) use this too.
   */
  async dispatch(connection: Connection, message: string | ArrayBuffer): Promise<void> {
    if (typeof message === "string") {
      const frame = parseFrame(message);
      if (frame) {
        const claim = this.lifecycle.frameClaim(frame.type);
        if (claim) {
          if (!claim.protocolOnly || (this.#options.protocol !== false && internalOf(connection).protocol)) {
            if ((await claim.handler(connection, frame)) !== false) return;
          }
        } else if (frame.type === RPC && answerUnclaimedRpc(connection, frame)) {
          // {"type":"rpc",…} with no Callables installed: answered, so client calls never hang.
          return;
        }
      }
    }
    for (const handlers of this.#handlers) {
      if ((await handlers.onMessage?.(connection, message)) === true) return;
    }
    await this.#options.handlers?.onMessage?.(connection, message);
  }

  /** Handler sets added with use(), then the configured one. */
  #chain(): WebSocketHandlers[] {
    const configured = this.#options.handlers;
    return configured ? [...this.#handlers, configured] : this.#handlers;
  }

  #close(connection: Connection, code: number, reason: string): void {
    this.#closed.add(connection);
    try {
      connection.close(code, reason);
    } catch {
      // Already closed.
    }
  }

  // ------------------------------------------------------------- connections

  /**
   * Iterates over open connections, optionally those with one tag.
   * @param tag - a tag from `getConnectionTags` (or a connection id)
   */
  *getConnections(tag?: string): IterableIterator<Connection> {
    for (const ws of this.lifecycle.ctx.getWebSockets(tag)) {
      if (ws.readyState !== OPEN || this.#closed.has(ws)) continue;
      const connection = asConnection(ws);
      if (connection) yield connection;
    }
    for (const connection of this.#live.values()) {
      if (tag === undefined || connection.tags.includes(tag)) yield connection;
    }
  }

  /** @returns one open connection by id, or `undefined` */
  getConnection(id: string): Connection | undefined {
    for (const connection of this.getConnections(id)) if (connection.id === id) return connection;
    return undefined;
  }

  /**
   * Adds a handler set that runs before the configured handlers (added sets run in the
   * order added). An added `onMessage` returning `true` claims the message.
   * @returns this WebSockets
   */
  use(handlers: WebSocketHandlers): this {
    this.#handlers.push(handlers);
    return this;
  }

  /**
   * Sends one message to every open connection, serialized once.
   * @param message - a string, binary data, or a value sent as JSON
   * @param options - `except` (ids or connections) and `tag` (narrowed by the platform's tag index)
   */
  broadcast(
    message: string | ArrayBuffer | ArrayBufferView | object,
    options: { except?: string | Connection | ReadonlyArray<string | Connection>; tag?: string } = {},
  ): void {
    const payload =
      typeof message === "string" || message instanceof ArrayBuffer || ArrayBuffer.isView(message)
        ? message
        : JSON.stringify(message);
    const except = toExcept(options.except);
    for (const connection of this.getConnections(options.tag)) {
      if (except && (except.has(connection) || except.has(connection.id))) continue;
      trySend(connection, payload);
    }
  }

  // ----------------------------------------------------------------- protocol

  /**
   * Sends the current state to every protocol-enabled connection except `except`.
   * Call it from the state's `onChanged(state, source)` with the source
   * (`"server"` or nothing: everyone receives it).
   */
  broadcastState(except?: Connection | "server" | null): void {
    const state = this.#options.state;
    if (!state) return;
    this.#broadcastProtocol(JSON.stringify({ type: STATE, state: state.get() ?? null }), except);
  }

  #broadcastProtocol(frame: string, except?: Connection | "server" | null): void {
    for (const connection of this.getConnections()) {
      if (connection === except) continue;
      if (this.#connecting.has(connection) || !internalOf(connection).protocol) continue;
      trySend(connection, frame);
    }
  }

  /** Sends the identity frame, then the current state, then frames other capabilities add. */
  sendConnectFrames(connection: Connection, identity?: Identity): void {
    if (!internalOf(connection).protocol) return;
    const state = this.#options.state;
    this.#sendIdentity(connection, identity, state !== undefined);
    if (state) this.sendState(connection);
    for (const frame of this.lifecycle.extraConnectFrames(connection)) trySend(connection, frame);
  }

  /** Sends the identity frame alone (name and kebab class by default). */
  sendIdentity(connection: Connection, identity?: Identity): void {
    this.#sendIdentity(connection, identity, false);
  }

  #sendIdentity(connection: Connection, identity: Identity | undefined, stateFollows: boolean): void {
    if (!internalOf(connection).protocol) return;
    const frame: Record<string, unknown> = {
      type: IDENTITY,
      name: identity?.name ?? this.lifecycle.name,
      agent: identity?.agent ?? this.lifecycle.className,
    };
    if (stateFollows) frame.stateFollows = true;
    trySend(connection, JSON.stringify(frame));
  }

  /** Sends the current state to one connection. */
  sendState(connection: Connection): void {
    const state = this.#options.state;
    if (!state || !internalOf(connection).protocol) return;
    trySend(connection, JSON.stringify({ type: STATE, state: state.get() ?? null }));
  }

  /**
   * Applies a client's state frame through the installed State (readonly connections are refused).
   * @returns `true` when `frame` was a state frame
   */
  applyStateFrame(connection: Connection, frame: unknown): boolean {
    if (!isStateFrame(frame)) return false;
    const claim = this.lifecycle.frameClaim(STATE);
    if (!claim) return false;
    void Promise.resolve(claim.handler(connection, frame as Record<string, unknown>)).catch((error: unknown) =>
      console.error("dokit: applying a state frame failed", error),
    );
    return true;
  }

  /** @returns whether the connection's state frames are refused */
  isReadonly(connection: Connection): boolean {
    return internalOf(connection).readonly;
  }

  /** Marks a connection readonly, or writable again with `false`. Survives hibernation. */
  setReadonly(connection: Connection, readonly = true): void {
    updateInternal(connection, { readonly });
  }

  /** @returns whether protocol frames reach the connection */
  isProtocolEnabled(connection: Connection): boolean {
    return internalOf(connection).protocol;
  }

  /** Turns protocol frames on or off for one connection. Survives hibernation. */
  setProtocolEnabled(connection: Connection, enabled: boolean): void {
    updateInternal(connection, { protocol: enabled });
  }

  // ------------------------------------------------- non-hibernating sessions

  /**
   * Registers a connection that is not a hibernating socket (a Cap'n Web
   * session) so it appears in `getConnections()` and receives broadcasts.
   * @returns a function that removes it again
   */
  addLiveConnection(connection: Connection): () => void {
    this.#live.set(connection.id, connection);
    return () => {
      if (this.#live.get(connection.id) === connection) this.#live.delete(connection.id);
    };
  }

  /** @returns the non-hibernating connection with this id, if any */
  getLiveConnection(id: string): Connection | undefined {
    return this.#live.get(id);
  }

  /**
   * For a connection accepted elsewhere (its attachment already holds id and uri): applies the
   * options' decisions (tags, readonly, protocol), then runs the connect sequence and `onConnect` handlers.
   */
  async connect(connection: Connection, ctx: ConnectionContext): Promise<void> {
    await this.#open(connection, ctx, await this.#decide(connection, ctx));
  }

  /** Runs the `onClose` handlers (for a connection accepted elsewhere, too). */
  disconnect(connection: Connection, code: number, reason: string, wasClean: boolean): Promise<void> {
    return this.#run(connection, (handlers) => handlers.onClose?.(connection, code, reason, wasClean));
  }
}

/** @returns the parsed frame when `message` is a JSON object with a string `type`, else `undefined` */
function parseFrame(message: string): (Record<string, unknown> & { type: string }) | undefined {
  // Only a JSON object can be a frame: skip the parse for anything else. Text that
  // starts with `{` and parses is an object (never null or an array).
  if (message.trimStart().charCodeAt(0) !== 123 /* { */) return undefined;
  let frame: Record<string, unknown>;
  try {
    frame = JSON.parse(message);
  } catch {
    return undefined;
  }
  // SAFETY: an object with a string `type`, checked here.
  return typeof frame.type === "string" ? (frame as Record<string, unknown> & { type: string }) : undefined;
}

function trySend(connection: Connection, payload: string | ArrayBuffer | ArrayBufferView): void {
  try {
    connection.send(payload);
  } catch {
    // The socket closed meanwhile; its close event cleans up.
  }
}

function toExcept(except: string | Connection | ReadonlyArray<string | Connection> | undefined): Set<unknown> | undefined {
  if (except === undefined) return undefined;
  return new Set(Array.isArray(except) ? except : [except]);
}

function isCapability<T = unknown>(value: object): value is Capability & T {
  return typeof (value as Capability).attach === "function" && typeof (value as Capability).capabilityName === "string";
}

function notInstalled(): DokitError {
  return new DokitError("NOT_INSTALLED", "this WebSockets is not installed yet: Lifecycle.install(this).use(webSockets)");
}
