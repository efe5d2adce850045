import type { Lifecycle } from "../lifecycle/lifecycle";
import type { Capability, Dispatch } from "../lifecycle/capability";
import type { Connection, ConnectionContext } from "../lifecycle/connection";
import type { Coalescing } from "./coalesce";
import type { ConnectionPlugin } from "./plugin";

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

/**
 * What WebSockets needs of a synced state: the state frame it builds, and a way to send its changes.
 * A `State` from `dokit/state` fits.
 */
export interface SyncedState {
  /** @returns the current value */
  get(): unknown;
  /** @returns the state frame with the current value, serialized (the same string until the value changes) */
  stateFrame(): string;
  /** Hands the state the broadcast its changes go out through (`except`: the connection that made one). */
  syncThrough?(broadcast: (frame: string, except: Connection | undefined) => void): void;
}

/** Options of `broadcast`. */
export interface BroadcastOptions {
  /** Connections left out: ids or connections. */
  except?: string | Connection | ReadonlyArray<string | Connection>;
  /** Only connections with this tag (narrowed by the platform's tag index). */
  tag?: string;
  /** A key: only the latest message broadcast with it in the tick is sent, when the tick ends (needs the `coalescing` option). */
  coalesce?: string;
}

/** A per-connection decision made when the connection is accepted. */
export type ConnectionDecision = (connection: Connection, ctx: ConnectionContext) => boolean | Promise<boolean>;

/**
 * The handle WebSockets gives a transport plug-in (Cap'n Web) through the door
 * (`door.transport()`): what a connection that is not a hibernating socket needs to be
 * accepted, listed and served like one.
 */
export interface TransportHost {
  /** The object's lifecycle: its host for the invocation context of the plug-in's work, its names for events. */
  readonly lifecycle: Lifecycle;
  /** The object's dispatch table: the client-callable methods claimed on it. */
  readonly dispatch: Dispatch;
  /** @returns the connection id the client asked for (`_pk`), a new one, or `undefined` when the asked one is invalid */
  connectionId(request: Request): string | undefined;
  /** @returns `socket` as a Connection with this id and upgrade URL, flags at their defaults */
  connection(socket: WebSocket, id: string, request: Request): Connection;
  /** Closes the hibernating connection with this id, if any (4009 `Connection replaced`): the session replaces it. */
  replaceSocket(id: string): void;
  /** Lists a connection that is not a hibernating socket: `getConnections()` and broadcasts include it from now on. */
  track(connection: Connection): void;
  /** Unlists a tracked connection (a no-op when another one with its id replaced it). */
  untrack(connection: Connection): void;
  /** @returns the tracked connection with this id, if any */
  find(id: string): Connection | undefined;
  /** Makes the options' decisions (tags, readonly, protocol) and stores them on the connection. */
  decide(connection: Connection, ctx: ConnectionContext): Promise<unknown>;
  /** Sends the connect frames (the connection is left out of broadcasts meanwhile), then runs `onConnect`. */
  greet(connection: Connection, ctx: ConnectionContext): Promise<void> | undefined;
  /** Handles one incoming message as a hibernating socket's is handled (frames, then `onMessage`). */
  receive(connection: Connection, message: string | ArrayBuffer): Promise<void> | undefined;
  /** Runs the `onClose` handlers. */
  close(connection: Connection, code: number, reason: string, wasClean: boolean): Promise<void> | undefined;
}

/**
 * What the `capnweb` option takes: the Cap'n Web transport from `dokit/capnweb` (opt-in, so other
 * bundles do not carry it), a connection plug-in that claims its upgrades and serves them through `door.transport()`.
 */
export type CapnwebTransport = ConnectionPlugin;

/** Options of `WebSockets`. */
export interface WebSocketsOptions {
  /** Connection handlers: `onConnect`, `onMessage`, `onClose`, `onError`. */
  handlers?: WebSocketHandlers;
  /**
   * A State capability to sync with clients (installed with the WebSockets when not used already):
   * each change is sent to every other protocol-enabled connection by itself.
   */
  state?: SyncedState;
  /** `false`: the state's changes are sent only by your own `broadcastState` calls. Default `true`. */
  syncState?: boolean;
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
  /**
   * Answers clients' pings without waking the object (the runtime's WebSocket auto-response).
   * `true`: ping `"dokit:ping"`, pong `"dokit:pong"`. Default off.
   */
  heartbeat?: boolean | HeartbeatOptions;
  /** Turns on `broadcast(message, { coalesce })`: `coalesceBroadcasts({ tickMs })` from `dokit/websockets` (opt-in by import). */
  coalescing?: Coalescing;
  /**
   * Limits what each connection may send: `new RateLimit({ messagesPerSecond, bytesPerSecond, burst })`
   * from `dokit/websockets`. A message over it is dropped with a `dokit_error` frame; a connection
   * that keeps sending is closed with 4429. Default off.
   */
  rateLimit?: InboundLimit;
  /**
   * Who is here: `new Presence()` from `dokit/presence` (installed with the WebSockets). Each connection
   * may publish a small value the others receive, coalesced per tick. Default off.
   */
  presence?: PresenceTracker;
  /**
   * A Yjs document served on its own path: `new YjsDocument()` from `dokit/yjs` (installed with the
   * WebSockets). Its connections speak the y-protocols binary wire and get no protocol frames. Default off.
   */
  yjs?: WireServer;
  /**
   * Plug-ins of the connections (plugin.ts): each claims its frame types, binary messages and
   * per-connection slots, and hears connects and closes. The `presence` and `yjs` options are plug-ins too.
   */
  plugins?: readonly ConnectionPlugin[];
}

/** What the `yjs` option takes: a connection plug-in (a `YjsDocument` from `dokit/yjs` fits). */
export type WireServer = ConnectionPlugin;

/** What the `presence` option takes: a connection plug-in (a `Presence` from `dokit/presence` fits). */
export type PresenceTracker = ConnectionPlugin;

/** What the `rateLimit` option takes: a connection plug-in that counts inbound messages (a `RateLimit` fits). */
export interface InboundLimit extends ConnectionPlugin {
  /** Counts one inbound message. @returns `true` when it is dropped (the limit told the client, or closed the connection) */
  drops(connection: Connection, message: string | ArrayBuffer): boolean;
}

/** The `heartbeat` option of `WebSockets`. */
export interface HeartbeatOptions {
  /** The exact text a client pings with (default `"dokit:ping"`; at most 2,048 bytes, the runtime's limit). */
  ping?: string;
  /** The exact text the runtime answers with (default `"dokit:pong"`; at most 2,048 bytes, the runtime's limit). */
  pong?: string;
  /** Closes sockets whose last ping is too old: `new HeartbeatSweep({ timeoutMs })` from `dokit/websockets`. */
  sweep?: HeartbeatSweeper;
}

/** What WebSockets needs of a heartbeat sweep (a `HeartbeatSweep` fits): told when a socket is accepted, so it runs while there are sockets. */
export interface HeartbeatSweeper extends Capability {
  /** A socket was accepted: make sure a sweep is pending (never rejects). */
  accepted(): Promise<void>;
  /** Tells the WebSockets of each socket the sweep closes (it ends the connection there at once). */
  onSwept?(swept: (ws: WebSocket) => void): void;
}

/** An identity for `sendIdentity` / `sendConnectFrames`; defaults to the object's name and kebab class. */
export interface Identity {
  name?: string;
  agent?: string;
}
