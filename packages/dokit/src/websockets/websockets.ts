import type { Capability, Claims, Dispatch, FrameContext, ProtocolFrame, SocketOwner } from "../lifecycle/capability";
import type { Connection, ConnectionContext } from "../lifecycle/connection";
import { contextStorage, type CurrentAgent, inConnectionContext, runInContext } from "../lifecycle/context";
import { DokitError } from "../lifecycle/errors";
import type { Lifecycle } from "../lifecycle/lifecycle";
import { lifecycleOf, type Wakeable, WAITING, WORKS_UNATTACHED } from "../lifecycle/wake";
import {
  CAPNWEB,
  CLOSE_DESTROYED,
  CLOSE_INVALID_ID,
  CLOSE_NO_TRANSPORT,
  NO_TRANSPORT_REASON,
  CLOSE_OPEN_FAILED,
  CLOSE_REPLACED,
  CONNECTION_ID_PARAM,
  HEARTBEAT_PING,
  HEARTBEAT_PONG,
  IDENTITY,
  INVALID_ID_REASON,
  isStateFrame,
  OPEN_FAILED_REASON,
  REPLACED_REASON,
  RPC,
  STATE,
  TRANSPORT_PARAM,
} from "../protocol/frames";
import { collectCallableMethods } from "../rpc/method-table";
import { answerUnclaimedRpc, serveRpc, TargetCallables } from "../rpc/serve-rpc";
import { closeWith, isThenable, parseFrame, trySend } from "../lifecycle/wire";
import { refuseUpgrade } from "../lifecycle/refuse";
import { isDokitSocket, storeFlags } from "./attachment";
import { asConnection, flagsOf, idOf, initConnection, updateFlags } from "./connection";
import type { BroadcastOptions, HeartbeatOptions, Identity, TransportHost, WebSocketHandlers, WebSocketsOptions } from "./options";
import type { Hold } from "./coalesce";
import { connectionTags, idTag, isIdTag, MAX_ID_LENGTH, runtimeTags } from "./tags";
import type { WebSocketsErrorCode } from "./errors";

/** What a `message:dispatch` event reports of a message: its frame type and the capability or handler that took it. */
type FrameNote = { type: string; handler: string };

const OPEN = 1;
const nothing = () => {};

/**
 * Accepts WebSocket upgrades with the hibernation API, tracks and tags
 * connections, and speaks the Agents protocol, so `useAgent` and `AgentClient`
 * work against a plain Durable Object.
 */
export class WebSockets implements Capability {
  readonly capabilityName = "WebSockets";
  readonly #options: WebSocketsOptions;
  readonly #handlers: WebSocketHandlers[] = [];
  #lifecycle: Lifecycle | undefined;
  #dispatch: Dispatch | undefined;
  // The sets below are made when first needed: most wakes need none of them, and the
  // capability is built again on every wake.
  /** The connection inside its (synchronous) connect sequence: left out of broadcasts. */
  #connecting: Connection | undefined;
  /** Connections refused while opening: their close runs no `onClose` handler. */
  #refused: WeakSet<WebSocket> | undefined;
  /** Connections closed by the server (their readyState may lag). */
  #closed: WeakSet<WebSocket> | undefined;
  /** Non-hibernating connections (Cap'n Web sessions), by id. */
  #live: Map<string, Connection> | undefined;
  /** The state frame the state has just sent by itself, until a `broadcastState` of it is skipped. */
  #synced: string | undefined;
  /** Set once this instance has configured the runtime's ping answer (see #autoRespond). */
  #answering = false;
  /** The broadcasts held for the current tick (made by the first coalesced broadcast). */
  #hold: Hold<BroadcastOptions> | undefined;

  /** @param options - handlers, state, callables, tags, readonly and protocol decisions */
  constructor(options: WebSocketsOptions = {}) {
    this.#options = options;
    const callables = options.callables;
    // A bare target is checked now (its method table is built once per class) and served from attach().
    if (callables && !isCapability(callables)) collectCallableMethods(callables);
    // The socket owner this capability claims, which the lifecycle also uses before it is attached (lifecycle/wake.ts).
    const owner: OwnerOf = Object.create(WebSockets.#owner);
    owner.of = this;
    (this as Wakeable)[WORKS_UNATTACHED] = owner;
    // The state sends its own changes through this WebSockets (a wake that changes nothing sends nothing).
    if (options.syncState !== false) {
      options.state?.syncThrough?.((frame, except) => {
        this.#synced = frame;
        this.#broadcastProtocol(frame, except);
      });
    }
  }

  /** The lifecycle this capability was installed on (or waits to be attached to). */
  get #installedOn(): Lifecycle {
    const lifecycle = lifecycleOf(this, this.#lifecycle);
    if (!lifecycle) throw notInstalled();
    return lifecycle;
  }

  /** The dispatch table of that lifecycle (wired first, when it waits). */
  get #table(): Dispatch {
    if (!this.#dispatch) (this as Wakeable)[WAITING]?.wire();
    if (!this.#dispatch) throw notInstalled();
    return this.#dispatch;
  }

  attach(claims: Claims): void {
    this.#lifecycle = claims.lifecycle;
    this.#dispatch = claims.dispatch;
    const state = this.#options.state;
    if (state && isCapability(state)) claims.use(state);
    // A `Callables` from dokit/callables is installed as it is; a bare target is served here.
    const callables = this.#options.callables;
    if (callables) {
      if (isCapability(callables)) claims.use(callables);
      else serveRpc(claims, new TargetCallables(callables));
    }
    // SAFETY: `true` has no `sweep`.
    const sweep = (this.#options.heartbeat as HeartbeatOptions | undefined)?.sweep;
    if (sweep) claims.use(sweep);
    // Presence and a wire server (dokit/yjs) are installed with the WebSockets and served through it.
    for (const served of [this.#options.presence, this.#options.yjs]) {
      if (served) {
        claims.use(served);
        served.serve(this);
      }
    }
    claims.catchAllUpgrade((request) => this.#accept(request));
    // SAFETY: set to the socket owner in the constructor.
    claims.takeSockets((this as Wakeable)[WORKS_UNATTACHED] as SocketOwner);
    claims.onDestroy(() => {
      for (const connection of this.getConnections()) this.#close(connection, CLOSE_DESTROYED, "Durable Object destroyed");
    });
  }

  // ---------------------------------------------------------------- accepting

  async #accept(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.searchParams.get(TRANSPORT_PARAM) === CAPNWEB) {
      if (this.#options.capnweb) return this.#options.capnweb.accept(request, this.#transportHost);
      return refuseUpgrade(CLOSE_NO_TRANSPORT, NO_TRANSPORT_REASON);
    }
    const id = connectionId(request, url);
    if (id === undefined) return refuseUpgrade(CLOSE_INVALID_ID, INVALID_ID_REASON);

    const { 0: client, 1: server } = new WebSocketPair();
    const ctx: ConnectionContext = { request };
    // `at`: when it opened (a disconnect's duration, a connection's age), kept only where events are installed.
    const at = this.#dispatch?.observer && Date.now();
    // The page's Origin, kept for other capabilities (McpClients); at most 256 characters (real ones are short, a cut one matches no origin).
    const flags = { id, tags: [id], uri: request.url, readonly: false, protocol: true, at, origin: request.headers.get("origin")?.slice(0, 256) };
    const onConnect = this.#handlerSetsWith("onConnect");
    // Nothing in the connect sequence receives the connection: the socket stays as the runtime made it (#plain).
    const plain = this.#plain(onConnect);
    // SAFETY: a plain socket is only sent to and compared by identity until its first event makes it a Connection.
    const connection = plain ? (storeFlags(server, flags), server as Connection) : initConnection(server, flags);
    let accepted = false;
    try {
      const tags = plain ? flags.tags : await this.#decide(connection, ctx);
      // No await between the replacement and the accept: one id, one open connection.
      this.#replace(id);
      this.#installedOn.ctx.acceptWebSocket(server, runtimeTags(tags));
      accepted = true;
      // Set in the same turn as the accept: no ping can arrive before it.
      if (this.#options.heartbeat) await this.#heartbeat(this.#options.heartbeat);
      await this.#greet(connection, ctx, plain, onConnect);
    } catch (error) {
      console.error(`dokit: connection ${id} failed while opening; refusing it with ${CLOSE_OPEN_FAILED}`, error);
      this.#dispatch?.observer?.error(this.#installedOn, "connect", error, id, "connect:refused");
      // SAFETY: its attachment is stored, so a plain socket becomes a Connection here.
      return this.#refuse(asConnection(server) as Connection, client, accepted);
    }
    this.#dispatch?.observer?.emit("lifecycle", this.#installedOn, "connect", { connectionId: id, began: at });
    return new Response(null, { status: 101, webSocket: client });
  }

  /**
   * Has the runtime answer the heartbeat ping with the pong itself, without waking the object,
   * and arms the sweep, if any. The answer belongs to the object's socket manager, which
   * outlives a hibernation while sockets are open (tested with evictDurableObject), so it is set
   * when a socket is accepted, once per instance, never on the wake path.
   */
  #heartbeat(heartbeat: true | HeartbeatOptions): Promise<void> | undefined {
    const options = heartbeat === true ? {} : heartbeat;
    if (!this.#answering) {
      this.#installedOn.ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(options.ping ?? HEARTBEAT_PING, options.pong ?? HEARTBEAT_PONG));
      this.#answering = true;
    }
    return options.sweep?.accepted();
  }

  /**
   * Whether a connection can open without becoming a Connection: nothing in its connect sequence
   * receives it (no per-connection decision, no `onConnect`, no frame another capability adds,
   * no events installed). A socket made a Connection (its prototype changed, its attachment kept
   * on it) keeps its JavaScript object alive while the object is awake, about 0.2 KB of heap per
   * connection (bench/README.md, "isolate heap per connection"); a plain socket becomes a
   * Connection on its first event instead, as after a wake.
   * @param onConnect - the handler sets that define `onConnect`
   */
  #plain(onConnect: readonly WebSocketHandlers[]): boolean {
    const options = this.#options;
    const dispatch = this.#table;
    return !(
      onConnect.length ||
      options.getConnectionTags ||
      options.readonly ||
      typeof options.protocol === "function" ||
      dispatch.observer ||
      dispatch.connectFrameSources[0]
    );
  }

  /**
   * Closes the open connection with this id, if any (4009 `Connection replaced`): a client that
   * reconnects with its id (`_pk`) before the object noticed its old socket drop replaces it.
   * One lookup in the platform's tag index, made once per upgrade.
   */
  #replace(id: string): void {
    this.#replaceSocket(id);
    this.#live?.get(id)?.close(CLOSE_REPLACED, REPLACED_REASON);
  }

  /** Closes the open hibernating connection with this id, if any (see #replace). */
  #replaceSocket(id: string): void {
    for (const ws of this.#installedOn.ctx.getWebSockets(idTag(id))) {
      // SAFETY: #isOpen accepted only dokit sockets, which asConnection makes Connections.
      if (this.#isOpen(ws)) this.#close(asConnection(ws) as Connection, CLOSE_REPLACED, REPLACED_REASON);
    }
  }

  /**
   * Answers an upgrade whose connect sequence failed: the client gets a socket
   * that is already closed with 4500.
   *
   * workerd completes a server-initiated close of a hibernatable socket only
   * when it is issued inside a WebSocket event (`webSocketMessage`, …): closed
   * from `fetch`, a timer or an alarm, the client receives the close frame and
   * answers it, but its TCP connection is never shut, so the client hangs in
   * CLOSING. A non-hibernating socket closed in `fetch` completes at once. So
   * the failed socket never reaches the client: it is closed and drained here
   * (its client end is accepted in-process, so the object lists it no more),
   * and the upgrade is answered with a fresh non-hibernating socket closed
   * with 4500, which every client reports promptly.
   */
  #refuse(connection: Connection, client: WebSocket, accepted: boolean): Response {
    (this.#refused ??= new WeakSet()).add(connection);
    if (accepted) {
      client.accept();
      this.#close(connection, CLOSE_OPEN_FAILED, OPEN_FAILED_REASON);
    }
    return refuseUpgrade(CLOSE_OPEN_FAILED, OPEN_FAILED_REASON);
  }

  /**
   * Sends the connect frames (out of broadcasts meanwhile), then runs the handler sets' `onConnect`.
   * A plain socket (see #plain) speaks the protocol (its flags are not read) and has no `onConnect` to run.
   */
  #greet(connection: Connection, ctx: ConnectionContext, plain: boolean, onConnect: readonly WebSocketHandlers[]): Promise<void> | undefined {
    this.#connecting = connection;
    try {
      if (this.#options.protocol !== false && (plain || flagsOf(connection).protocol)) this.#connectFrames(connection);
    } finally {
      this.#connecting = undefined;
    }
    return this.#run(connection, onConnect, (handlers) => handlers.onConnect?.(connection, ctx), ctx.request);
  }

  /**
   * Calls each of `sets` (from #handlerSetsWith) in order, in the connection's invocation context
   * (entered only when there is one to call).
   */
  #run(connection: Connection, sets: readonly WebSocketHandlers[], call: (handlers: WebSocketHandlers) => unknown, request?: Request): Promise<void> | undefined {
    if (!sets.length) return;
    const scope: Partial<CurrentAgent> = { agent: this.#installedOn.host, connection };
    if (request) scope.request = request;
    return runInContext(scope, async () => {
      for (const handlers of sets) await call(handlers);
    });
  }

  /** @returns the handler sets that define `name`: those added with use(), in order, then the configured one */
  #handlerSetsWith(name: keyof WebSocketHandlers): WebSocketHandlers[] {
    return [...this.#handlers, this.#options.handlers].filter((handlers): handlers is WebSocketHandlers => !!handlers?.[name]);
  }

  /**
   * Makes the options' per-connection decisions (tags, readonly, protocol) and stores them in
   * the attachment, which already holds the defaults (written again only when one differs).
   * @returns the tags to accept the socket with
   */
  async #decide(connection: Connection, ctx: ConnectionContext): Promise<string[]> {
    const options = this.#options;
    const tags = connectionTags(connection.id, options.getConnectionTags ? await options.getConnectionTags(connection, ctx) : []);
    const readonly = (await options.readonly?.(connection, ctx)) === true;
    // A connection of another wire (dokit/yjs) never speaks the protocol: it could not read a JSON frame.
    const protocol = options.yjs?.serves(ctx.request) ? false : typeof options.protocol === "function" ? (await options.protocol(connection, ctx)) !== false : true;
    if (tags.length > 1 || readonly || !protocol) updateFlags(connection, { tags, readonly, protocol });
    return tags;
  }

  // ------------------------------------------------------------ socket events

  /**
   * The socket owner's methods: each WebSockets's owner is a small object with these as its
   * prototype and the capability in `of`, so building the capability (on every wake) creates
   * no closures and runs no constructor for it.
   */
  static readonly #owner: SocketOwner = {
    message(this: OwnerOf, ws: WebSocket, message: string | ArrayBuffer): Promise<unknown> | boolean {
      const connection = asConnection(ws);
      if (!connection) return false;
      const sockets = this.of;
      // Over its rate limit: dropped before any claim or handler sees it (rate-limit.ts).
      if (sockets.#options.rateLimit?.drops(connection, message)) return true;
      // Someone listens on agents:message: the frame is timed and noted.
      if (sockets.#dispatch?.observer) return sockets.#observedMessage(connection, message);
      // As #dispatchMessage, one call less for most messages.
      if (typeof message === "string" && message.trimStart().charCodeAt(0) === 123 /* { */) {
        const frame = parseFrame(message);
        if (frame) return sockets.#dispatchFrame(connection, message, frame) ?? true;
      }
      // No context to enter and no added handler sets: the configured onMessage directly (as #callHandlers does).
      if (sockets.#handlers.length === 0 && !contextStorage()) {
        const pending: unknown = sockets.#options.handlers?.onMessage?.(connection, message);
        return pending !== undefined && isThenable(pending) ? Promise.resolve(pending).then(nothing) : true;
      }
      const host = sockets.#installedOn.host;
      return inConnectionContext(host, connection, WebSockets.#callHandlers, sockets, connection, message) ?? true;
    },

    async close(this: OwnerOf, ws: WebSocket, code: number, reason: string, wasClean: boolean): Promise<boolean> {
      const connection = asConnection(ws);
      if (!connection) return false;
      const sockets = this.of;
      if (sockets.#refused?.has(ws)) return true; // its client never saw it open
      (sockets.#closed ??= new WeakSet()).add(ws);
      try {
        await sockets.#runOnClose(connection, code, reason, wasClean);
      } finally {
        closeWith(ws, code, reason); // reciprocate the client's close with the same code
        const at = flagsOf(connection).at;
        // {"type":"disconnect","payload":{connectionId,code,reason,wasClean,durationMs?}} on agents:lifecycle
        sockets.#dispatch?.observer?.emit("lifecycle", sockets.#installedOn, "disconnect", {
          connectionId: connection.id,
          code,
          reason,
          wasClean,
          ...(at !== undefined && { began: at }),
        });
      }
      return true;
    },

    async error(this: OwnerOf, ws: WebSocket, error: unknown): Promise<boolean> {
      const connection = asConnection(ws);
      if (!connection) return false;
      await this.of.#run(connection, this.of.#handlerSetsWith("onError"), (handlers) => handlers.onError?.(connection, error));
      return true;
    },

    // Frames other capabilities broadcast (cf_agent_mcp_servers).
    protocol(this: OwnerOf, frame: ProtocolFrame): void {
      if (this.of.#options.protocol !== false) this.of.#broadcastProtocol(frame);
    },

    // The flags are a FrameContext (readonly, origin).
    context(this: OwnerOf, connection: Connection): FrameContext | undefined {
      return isDokitSocket(connection) ? flagsOf(connection) : undefined;
    },
  };

  /** A message while someone listens on agents:message: a note of the frame type and the handler that takes it. */
  async #observedMessage(connection: Connection, message: string | ArrayBuffer): Promise<void> {
    const observer = this.#dispatch?.observer;
    const began = observer?.since("message");
    if (!observer || !began) return this.#dispatchMessage(connection, message);
    const note: FrameNote = { type: "", handler: "onMessage" };
    await this.#dispatchMessage(connection, message, note);
    const text = typeof message === "string";
    observer.emit("message", this.#installedOn, "message:dispatch", {
      connectionId: connection.id,
      type: note.type || (text ? "text" : "binary"),
      handler: note.handler,
      size: text ? message.length : message.byteLength,
      began,
      ...(observer.values && { body: message }),
    });
  }

  /**
   * Dispatches one incoming message: a text frame is parsed once and its `type`
   * looked up in the dispatch table; everything else goes to the handler chain.
   * Cap'n Web's pipe and observed messages come here; the socket owner's `message`
   * does the same inline for a hibernating socket's message.
   * Handlers and claims run in the connection's context (`inConnectionContext`);
   * the parsing and the lookup do not need it.
   * @returns a promise while a handler or claim is asynchronous, else `undefined`
   */
  #dispatchMessage(connection: Connection, message: string | ArrayBuffer, note?: FrameNote): Promise<void> | undefined {
    // Only text that starts with `{` can be a frame (parseFrame checks it too; a message that is not one skips the call).
    if (typeof message === "string" && message.trimStart().charCodeAt(0) === 123 /* { */) {
      const frame = parseFrame(message);
      if (frame) return this.#dispatchFrame(connection, message, frame, note);
    }
    return this.#toHandlers(connection, message);
  }

  /**
   * A parsed frame: to the capability that claimed its type, else to the handlers. A claim that
   * answers synchronously (an rpc call of a synchronous method) is handled without a promise.
   */
  #dispatchFrame(connection: Connection, message: string, frame: Record<string, unknown> & { type: string }, note?: FrameNote): Promise<void> | undefined {
    if (note) note.type = frame.type;
    // Not attached yet: only the frame types dokit's capabilities claim need the table (lifecycle/wake.ts).
    const claim = this.#dispatch || frame.type === STATE || frame.type === RPC ? this.#table.frame(frame.type) : undefined;
    if (claim) {
      const flags = flagsOf(connection);
      if (!claim.protocolOnly || (this.#options.protocol !== false && flags.protocol)) {
        // The flags carry `readonly` (a FrameContext) without an allocation per frame.
        const handled = claim.ownContext
          ? claim.handler(connection, frame, flags)
          : inConnectionContext(this.#installedOn.host, connection, claim.handler, connection, frame, flags);
        if (isThenable(handled)) return this.#afterClaim(handled, claim.owner, connection, message, note);
        if (handled !== false) return void (note && (note.handler = claim.owner));
      }
    } else if (frame.type === RPC && answerUnclaimedRpc(connection, frame, this.#installedOn.host)) {
      // {"type":"rpc",…} with no Callables installed: answered, so client calls never hang.
      return void (note && (note.handler = "WebSockets"));
    }
    return this.#toHandlers(connection, message);
  }

  async #afterClaim(handled: PromiseLike<unknown>, owner: string, connection: Connection, message: string, note?: FrameNote): Promise<void> {
    if ((await handled) !== false) return void (note && (note.handler = owner));
    await this.#toHandlers(connection, message);
  }

  /**
   * The handler chain: added sets first (one returning `true` claims the message), then the
   * configured one. Without added sets a synchronous handler is called without a promise.
   * @returns a promise when a handler is asynchronous, else `undefined`
   */
  #toHandlers(connection: Connection, message: string | ArrayBuffer): Promise<void> | undefined {
    return inConnectionContext(this.#installedOn.host, connection, WebSockets.#callHandlers, this, connection, message);
  }

  static #callHandlers(sockets: WebSockets, connection: Connection, message: string | ArrayBuffer): Promise<void> | undefined {
    if (sockets.#handlers.length > 0) return sockets.#toAddedHandlers(connection, message);
    const pending: unknown = sockets.#options.handlers?.onMessage?.(connection, message);
    return pending !== undefined && isThenable(pending) ? Promise.resolve(pending).then(nothing) : undefined;
  }

  async #toAddedHandlers(connection: Connection, message: string | ArrayBuffer): Promise<void> {
    for (const handlers of this.#handlers) {
      if ((await handlers.onMessage?.(connection, message)) === true) return;
    }
    await this.#options.handlers?.onMessage?.(connection, message);
  }

  #close(connection: Connection, code: number, reason: string): void {
    (this.#closed ??= new WeakSet()).add(connection);
    closeWith(connection, code, reason);
  }

  /** Runs the `onClose` handlers. */
  #runOnClose(connection: Connection, code: number, reason: string, wasClean: boolean): Promise<void> | undefined {
    this.#options.presence?.left(connection);
    return this.#run(connection, this.#handlerSetsWith("onClose"), (handlers) => handlers.onClose?.(connection, code, reason, wasClean));
  }

  // ------------------------------------------------------------- connections

  /**
   * Iterates over open connections, optionally those with one tag.
   * @param tag - a tag from `getConnectionTags` (never a connection id: use `getConnection(id)`)
   */
  *getConnections(tag?: string): IterableIterator<Connection> {
    // The id namespace is no user tag: nothing carries such a tag.
    if (tag !== undefined && isIdTag(tag)) return;
    for (const ws of this.#installedOn.ctx.getWebSockets(tag)) {
      // SAFETY: #isOpen accepted only dokit sockets, which asConnection makes Connections.
      if (this.#isOpen(ws)) yield asConnection(ws) as Connection;
    }
    yield* this.#liveWith(tag);
  }

  /** @returns whether a hibernating socket is one of dokit's and open (the attachment is read, not decoded) */
  #isOpen(ws: WebSocket): boolean {
    return ws.readyState === OPEN && !this.#closed?.has(ws) && isDokitSocket(ws);
  }

  /** The non-hibernating connections (Cap'n Web sessions), optionally those with one tag. */
  *#liveWith(tag: string | undefined): IterableIterator<Connection> {
    if (!this.#live) return;
    for (const connection of this.#live.values()) {
      // The first entry of `tags` is the id, which is no tag.
      if (tag === undefined || connection.tags.indexOf(tag, 1) > 0) yield connection;
    }
  }

  /** @returns one open connection by id (its tag in the id namespace), or `undefined` */
  getConnection(id: string): Connection | undefined {
    for (const ws of this.#installedOn.ctx.getWebSockets(idTag(id))) {
      // SAFETY: #isOpen accepted only dokit sockets, which asConnection makes Connections.
      if (this.#isOpen(ws)) return asConnection(ws) as Connection;
    }
    return this.#live?.get(id);
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
   * @param options - `except` (ids or connections), `tag` (narrowed by the platform's tag index), and
   *   `coalesce`: a key whose latest message alone is sent when the tick (the `coalescing` option) ends
   */
  broadcast(
    message: string | ArrayBuffer | ArrayBufferView | object,
    options: BroadcastOptions = {},
  ): void {
    const payload =
      typeof message === "string" || message instanceof ArrayBuffer || ArrayBuffer.isView(message)
        ? message
        : JSON.stringify(message);
    if (options.coalesce !== undefined) {
      // Checked now (the option, the install): the caller hears of a mistake, not a timer.
      const coalescing = this.#options.coalescing;
      if (!coalescing) throw new DokitError<WebSocketsErrorCode>("INVALID_ARGUMENT", "coalesce needs the coalescing option: coalesceBroadcasts()");
      void this.#installedOn;
      this.#hold ??= coalescing((held, { except, tag }) => this.broadcast(held, { except, tag }));
      return this.#hold(options.coalesce, payload, options);
    }
    const except = toExcept(options.except);
    // The hibernating sockets are not made Connections here: a broadcast after a wake then decodes
    // no flags and changes no socket's prototype (it reads each attachment once, as a string).
    const tag = options.tag;
    // A tag in the id namespace is nobody's tag (see getConnections).
    if (tag !== undefined && isIdTag(tag)) return;
    for (const ws of this.#installedOn.ctx.getWebSockets(tag)) {
      if (!this.#isOpen(ws) || (except && (except.has(ws) || except.has(idOf(ws))))) continue;
      trySend(ws, payload);
    }
    for (const connection of this.#liveWith(tag)) {
      if (except && (except.has(connection) || except.has(connection.id))) continue;
      trySend(connection, payload);
    }
  }

  /** @returns what keeps the object in memory: coalesced broadcasts waiting for their tick, one line (else none) */
  keepsAwake(): string[] {
    const waiting = this.#hold?.waiting();
    return waiting ? [`websockets: ${waiting} coalesced broadcast(s) waiting for the tick`] : [];
  }

  // ----------------------------------------------------------------- protocol

  /**
   * Sends the current state to every protocol-enabled connection except `except` (`"server"` or
   * nothing: everyone receives it). A synced state sends its changes by itself: the first call for
   * a value it has just sent (code written for the reference calls it from `onChanged`) sends nothing.
   */
  broadcastState(except?: Connection | "server" | null): void {
    const state = this.#options.state;
    if (!state) return;
    const frame = state.stateFrame();
    if (frame === this.#synced) return void (this.#synced = undefined);
    this.#broadcastProtocol(frame, except);
  }

  #broadcastProtocol(frame: ProtocolFrame, except?: Connection | "server" | null): void {
    for (const connection of this.getConnections()) {
      if (connection === except) continue;
      if (connection === this.#connecting) continue;
      const flags = flagsOf(connection);
      if (!flags.protocol) continue;
      const text = typeof frame === "string" ? frame : frame(connection, flags);
      if (text !== undefined) trySend(connection, text);
    }
  }

  /** Sends the identity frame, then the current state, then frames other capabilities add. */
  sendConnectFrames(connection: Connection, identity?: Identity): void {
    if (flagsOf(connection).protocol) this.#connectFrames(connection, identity);
  }

  /** The connect frames, for a connection known to speak the protocol (its flags are not read). */
  #connectFrames(connection: Connection, identity?: Identity): void {
    const state = this.#options.state;
    trySend(connection, this.#identityFrame(identity, state !== undefined));
    if (state) trySend(connection, state.stateFrame());
    for (const source of this.#table.connectFrameSources) {
      const frame = source(connection);
      if (frame !== undefined) trySend(connection, frame);
    }
  }

  /** Sends the identity frame alone (name and kebab class by default). */
  sendIdentity(connection: Connection, identity?: Identity): void {
    if (flagsOf(connection).protocol) trySend(connection, this.#identityFrame(identity, false));
  }

  #identityFrame(identity: Identity | undefined, stateFollows: boolean): string {
    const frame: Record<string, unknown> = {
      type: IDENTITY,
      name: identity?.name ?? this.#installedOn.name,
      agent: identity?.agent ?? this.#installedOn.className,
    };
    if (stateFollows) frame.stateFollows = true;
    return JSON.stringify(frame);
  }

  /** Sends the current state to one connection. */
  sendState(connection: Connection): void {
    const state = this.#options.state;
    if (state && flagsOf(connection).protocol) trySend(connection, state.stateFrame());
  }

  /**
   * Applies a client's state frame through the installed State (readonly connections are refused).
   * @returns `true` when `frame` was a state frame
   */
  applyStateFrame(connection: Connection, frame: unknown): boolean {
    if (!isStateFrame(frame)) return false;
    const claim = this.#table.frame(STATE);
    if (!claim) return false;
    const context = { readonly: flagsOf(connection).readonly };
    void Promise.resolve(claim.handler(connection, frame as Record<string, unknown>, context)).catch((error: unknown) =>
      console.error("dokit: applying a state frame failed", error),
    );
    return true;
  }

  /** @returns whether the connection's state frames are refused */
  isReadonly(connection: Connection): boolean {
    return flagsOf(connection).readonly;
  }

  /** Marks a connection readonly, or writable again with `false`. Survives hibernation. */
  setReadonly(connection: Connection, readonly = true): void {
    updateFlags(connection, { readonly });
  }

  /** @returns whether protocol frames reach the connection */
  isProtocolEnabled(connection: Connection): boolean {
    return flagsOf(connection).protocol;
  }

  /** Turns protocol frames on or off for one connection. Survives hibernation. */
  setProtocolEnabled(connection: Connection, enabled: boolean): void {
    updateFlags(connection, { protocol: enabled });
  }

  // ------------------------------------------------- non-hibernating sessions

  /** The private handle a transport plug-in (Cap'n Web) gets: never public members of WebSockets. */
  get #transportHost(): TransportHost {
    const live = (this.#live ??= new Map());
    return {
      lifecycle: this.#installedOn,
      dispatch: this.#table,
      track: (connection) => live.set(connection.id, connection),
      untrack: (connection) => live.get(connection.id) === connection && live.delete(connection.id),
      find: (id) => live.get(id),
      connectionId,
      replaceSocket: (id) => this.#replaceSocket(id),
      connection: (socket, id, request) =>
        initConnection(socket, { id, tags: [id], uri: request.url, readonly: false, protocol: true, origin: request.headers.get("origin")?.slice(0, 256) }),
      decide: (connection, ctx) => this.#decide(connection, ctx),
      greet: (connection, ctx) => this.#greet(connection, ctx, false, this.#handlerSetsWith("onConnect")),
      receive: (connection, message) => this.#dispatchMessage(connection, message),
      close: (connection, code, reason, wasClean) => this.#runOnClose(connection, code, reason, wasClean),
    };
  }
}

/** @returns the connection id the client asked for (`_pk`) or a new one; `undefined` when the asked one is too long */
function connectionId(request: Request, url = new URL(request.url)): string | undefined {
  const id = url.searchParams.get(CONNECTION_ID_PARAM) || crypto.randomUUID();
  return id.length > MAX_ID_LENGTH ? undefined : id;
}

function toExcept(except: string | Connection | ReadonlyArray<string | Connection> | undefined): Set<unknown> | undefined {
  if (except === undefined) return undefined;
  return new Set(Array.isArray(except) ? except : [except]);
}

/** The socket owner of one WebSockets (see `WebSockets.#owner`). */
type OwnerOf = SocketOwner & { of: WebSockets };

function isCapability<T = unknown>(value: object): value is Capability & T {
  return typeof (value as Capability).attach === "function" && typeof (value as Capability).capabilityName === "string";
}

function notInstalled(): DokitError {
  return new DokitError<WebSocketsErrorCode>("NOT_INSTALLED", "this WebSockets is not installed yet: Lifecycle.install(this).use(webSockets)");
}

