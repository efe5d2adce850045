// The WebSockets capability: its state and its public methods. Its internal fields are keyed by
// the symbols of internal.ts, so the work lives in the folder's other files: accepting an upgrade
// (accept.ts), the socket owner's events (socket-events.ts), message dispatch (dispatch.ts), the
// handler sets (handlers.ts), the protocol frames (protocol-frames.ts), the open connections
// (open-connections.ts), the plug-ins' door (plugin.ts, slot.ts) and the handle of transport plug-ins
// (transport-host.ts). The options that name a plug-in (`state`, `presence`, `yjs`, `rateLimit`,
// `heartbeat`, `capnweb`) only build it and hand it to the door, as `plugins` does.
import type { Capability, Claims, Dispatch, SocketOwner } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { DokitError } from "../lifecycle/errors";
import type { Lifecycle } from "../lifecycle/lifecycle";
import { refuseUpgrade } from "../lifecycle/refuse";
import { type Wakeable, WORKS_UNATTACHED } from "../lifecycle/wake";
import { trySend } from "../frames/send";
import { CAPNWEB, CLOSE_NO_TRANSPORT, NO_TRANSPORT_REASON, TRANSPORT_PARAM } from "../protocol/capnweb";
import { CLOSE_DESTROYED } from "../protocol/close-codes";
import { isStateFrame, STATE } from "../protocol/agents";
import { collectCallableMethods } from "../rpc/method-table";
import { serveRpc, TargetCallables } from "../rpc/serve-rpc";
import { accept } from "./accept";
import type { Hold } from "./coalesce";
import { asConnection, flagsOf, idOf, updateFlags } from "./connection";
import type { WebSocketsErrorCode } from "./errors";
import { BINARY, CLOSED, CONNECTING, COUNTED, DISPATCH, GATES, HANDLERS, HOST, installedOn, LIFECYCLE, LIVE, OPTIONS, PLUGINS, REFUSED, SLOT_NAMES } from "./internal";
import { closeConnection, type Counted, isOpen, liveWith, openCount, serverClosed, taggedSockets } from "./open-connections";
import { heartbeat } from "./heartbeat";
import type { BroadcastOptions, Identity, TransportHost, WebSocketHandlers, WebSocketsOptions } from "./options";
import type { BuiltDoor, ConnectionPlugin, PluginDoor } from "./plugin";
import { type StateSync, stateSync } from "./state-sync";
import { broadcastProtocol, connectFrames, identityFrame } from "./protocol-frames";
import { claimOf } from "./dispatch";
import { socketOwner } from "./socket-events";
import { idTag, isReservedTag, pluginTag } from "./tags";
import { connectionSlot } from "./slot";
import { transportHost } from "./transport-host";

/**
 * Accepts WebSocket upgrades with the hibernation API, tracks and tags
 * connections, and speaks the Agents protocol, so `useAgent` and `AgentClient`
 * work against a plain Durable Object.
 */
export class WebSockets implements Capability {
  readonly capabilityName = "WebSockets";
  // Keyed by the symbols of internal.ts (described there), which no subpath exports: the folder's
  // other files read these fields, user code cannot.
  readonly [OPTIONS]: WebSocketsOptions;
  readonly [HANDLERS]: WebSocketHandlers[] = [];
  readonly [PLUGINS]: readonly ConnectionPlugin[];
  readonly [BINARY]: boolean;
  readonly [GATES]: readonly ConnectionPlugin[] | undefined;
  declare [SLOT_NAMES]: Set<string> | undefined;
  [LIFECYCLE]: Lifecycle | undefined;
  [DISPATCH]: Dispatch | undefined;
  // The fields below are set when first needed (declared only, so a new instance carries none):
  // most wakes need none of them, and the capability is built again on every wake.
  declare [CONNECTING]: Connection | undefined;
  declare [REFUSED]: WeakSet<WebSocket> | undefined;
  declare [CLOSED]: WeakSet<WebSocket> | undefined;
  declare [LIVE]: Map<string, Connection> | undefined;
  declare [COUNTED]: Counted | undefined;
  declare [HOST]: TransportHost | undefined;
  readonly #owner: SocketOwner;
  /** The plug-in of the `state` option (state-sync.ts), which `broadcastState` and `sendState` go through. */
  readonly #sync: StateSync | undefined;
  /** The broadcasts held for the current tick (made by the first coalesced broadcast). */
  #hold: Hold<BroadcastOptions> | undefined;

  /** @param options - handlers, state, callables, tags, readonly and protocol decisions */
  constructor(options: WebSocketsOptions = {}) {
    this[OPTIONS] = options;
    // The options that name a plug-in build it (`state`, `heartbeat`) or pass it (the others) to the same door as `plugins`.
    const sync = (this.#sync = options.state && stateSync(options.state, options.syncState !== false));
    const plugins = [
      sync,
      options.rateLimit,
      options.heartbeat ? heartbeat(options.heartbeat) : undefined,
      options.capnweb,
      options.presence,
      options.yjs,
      ...(options.plugins ?? []),
    ].filter((plugin): plugin is ConnectionPlugin => plugin !== undefined);
    this[PLUGINS] = plugins;
    // Slots are names in each connection's attachment (slot.ts) and a protocol broadcast walks the
    // connections through the lifecycle attached or waiting: a plug-in may take both before it is attached.
    let built: BuiltDoor | undefined;
    for (const plugin of plugins) plugin.built?.((built ??= { slot: (name, options) => connectionSlot(this, name, options), protocol: (frame, except) => broadcastProtocol(this, frame, except) }));
    this[BINARY] = plugins.some((plugin) => plugin.binary);
    const gates = plugins.filter((plugin) => plugin.drops);
    this[GATES] = gates.length ? gates : undefined;
    const callables = options.callables;
    // A bare target is checked now (its method table is built once per class) and served from attach().
    if (callables && !isCapability(callables)) collectCallableMethods(callables);
    // The socket owner this capability claims, which the lifecycle also uses before it is attached
    // (lifecycle/wake.ts): not with plug-ins whose door must be open first (it opens when the WebSockets
    // is attached); those that say they work unattached (their hooks run only on wired paths, or need
    // only what `built` gave them) leave it so.
    this.#owner = socketOwner(this);
    if (plugins.every((plugin) => (plugin as Wakeable)[WORKS_UNATTACHED])) (this as Wakeable)[WORKS_UNATTACHED] = this.#owner;
  }

  attach(claims: Claims): void {
    this[LIFECYCLE] = claims.lifecycle;
    this[DISPATCH] = claims.dispatch;
    const options = this[OPTIONS];
    // A `Callables` from dokit/callables is installed as it is; a bare target is served here.
    const callables = options.callables;
    if (callables) {
      if (isCapability(callables)) claims.use(callables);
      else serveRpc(claims, new TargetCallables(callables));
    }
    // Each plug-in claims its frames, upgrades and slots through the door (plugin.ts).
    const door: Omit<PluginDoor, "connections"> = {
      claims,
      sockets: this,
      slot: (name, options) => connectionSlot(this, name, options),
      closed: (ws) => {
        const connection = asConnection(ws);
        if (connection) serverClosed(this, connection);
      },
      transport: () => (this[HOST] ??= transportHost(this)),
    };
    // Each plug-in's door lists the connections tagged for it (tags.ts `pluginTag`) through the platform's tag index.
    for (const plugin of this[PLUGINS]) {
      const tag = pluginTag(plugin.pluginName);
      plugin.plug({ ...door, connections: () => taggedSockets(this, tag) });
    }
    claims.catchAllUpgrade((request) => this.#upgrade(request));
    claims.takeSockets(this.#owner);
    claims.onDestroy(() => {
      for (const connection of this.getConnections()) closeConnection(this, connection, CLOSE_DESTROYED, "Durable Object destroyed");
    });
  }

  /**
   * An upgrade no plug-in took (a transport plug-in claims its own with `claims.upgrade`): a hibernating
   * socket (accept.ts). One that asks for the Agents protocol's Cap'n Web transport reaches here only
   * without that plug-in, and is refused, so the client hears why.
   */
  async #upgrade(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.searchParams.get(TRANSPORT_PARAM) !== CAPNWEB) return accept(this, request, url);
    return refuseUpgrade(CLOSE_NO_TRANSPORT, NO_TRANSPORT_REASON);
  }

  // ------------------------------------------------------------- connections

  /**
   * Iterates over open connections, optionally those with one tag.
   * @param tag - a tag from `getConnectionTags` (never a connection id: use `getConnection(id)`)
   */
  *getConnections(tag?: string): IterableIterator<Connection> {
    // A reserved namespace (the ids', the plug-ins': tags.ts) is no user tag: nothing carries such a tag.
    if (tag !== undefined && isReservedTag(tag)) return;
    for (const ws of installedOn(this).ctx.getWebSockets(tag)) {
      // SAFETY: isOpen accepted only dokit sockets, which asConnection makes Connections.
      if (isOpen(this, ws)) yield asConnection(ws) as Connection;
    }
    yield* liveWith(this, tag);
  }

  /**
   * @returns how many connections are open: as many as `getConnections()` yields, walked again only
   *   after a socket of the object opened or began to close (so a count per message costs nothing)
   */
  count(): number {
    return openCount(this);
  }

  /** @returns one open connection by id (its tag in the id namespace), or `undefined` */
  getConnection(id: string): Connection | undefined {
    for (const connection of taggedSockets(this, idTag(id))) return connection;
    return this[LIVE]?.get(id);
  }

  /** @returns the plug-in with this `pluginName` (from `plugins` or an option that names one: `state`, `presence`, `yjs`, `rateLimit`, `heartbeat`, `capnweb`), if any */
  plugin(name: string): ConnectionPlugin | undefined {
    return this[PLUGINS].find((plugin) => plugin.pluginName === name);
  }

  /**
   * Adds a handler set that runs before the configured handlers (added sets run in the
   * order added). An added `onMessage` returning `true` claims the message.
   * @returns this WebSockets
   */
  use(handlers: WebSocketHandlers): this {
    this[HANDLERS].push(handlers);
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
      const coalescing = this[OPTIONS].coalescing;
      if (!coalescing) throw new DokitError<WebSocketsErrorCode>("INVALID_ARGUMENT", "coalesce needs the coalescing option: coalesceBroadcasts()");
      installedOn(this);
      this.#hold ??= coalescing((held, { except, tag }) => this.broadcast(held, { except, tag }));
      return this.#hold(options.coalesce, payload, options);
    }
    const except = toExcept(options.except);
    // The hibernating sockets are not made Connections here: a broadcast after a wake then decodes
    // no flags and changes no socket's prototype (it reads each attachment once, as a string).
    const tag = options.tag;
    // A tag in a reserved namespace is nobody's tag (see getConnections).
    if (tag !== undefined && isReservedTag(tag)) return;
    for (const ws of installedOn(this).ctx.getWebSockets(tag)) {
      if (!isOpen(this, ws) || (except && (except.has(ws) || except.has(idOf(ws))))) continue;
      trySend(ws, payload);
    }
    for (const connection of liveWith(this, tag)) {
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
    this.#sync?.broadcast(except);
  }

  /** Sends the identity frame, then the current state (and other plug-ins' connect frames), then frames other capabilities add. */
  sendConnectFrames(connection: Connection, identity?: Identity): void {
    if (flagsOf(connection).protocol) connectFrames(this, connection, identity);
  }

  /** Sends the identity frame alone (name and kebab class by default). */
  sendIdentity(connection: Connection, identity?: Identity): void {
    if (flagsOf(connection).protocol) trySend(connection, identityFrame(installedOn(this), identity));
  }

  /** Sends the current state to one connection. */
  sendState(connection: Connection): void {
    const sync = this.#sync;
    if (sync && flagsOf(connection).protocol) trySend(connection, sync.connectFrame());
  }

  /**
   * Applies a client's state frame through the installed State (readonly connections are refused).
   * @returns `true` when `frame` was a state frame
   */
  applyStateFrame(connection: Connection, frame: unknown): boolean {
    if (!isStateFrame(frame)) return false;
    const claim = claimOf(this, STATE);
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
}

function toExcept(except: string | Connection | ReadonlyArray<string | Connection> | undefined): Set<unknown> | undefined {
  if (except === undefined) return undefined;
  return new Set(Array.isArray(except) ? except : [except]);
}

function isCapability<T = unknown>(value: object): value is Capability & T {
  return typeof (value as Capability).attach === "function" && typeof (value as Capability).capabilityName === "string";
}
