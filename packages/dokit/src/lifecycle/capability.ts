import type { Connection, ConnectionContext } from "./connection";
import type { Lifecycle } from "./lifecycle";

/**
 * A capability is a plain object built from options. `use()` calls `attach`
 * once, and the capability declares there what it claims.
 */
export interface Capability {
  /** Shown in errors (claim conflicts, 404 hints). */
  readonly capabilityName: string;
  /** Declares the capability's claims; called once, by `lifecycle.use()`. */
  attach(claims: Claims): void;
}

/** Answers an upgrade with a Response (usually 101), or `undefined` to pass it on. */
export type UpgradeHandler = (request: Request) => Response | undefined | Promise<Response | undefined>;
/**
 * Answers a plain HTTP request on a claimed route (`path` is the path below the object's base), or
 * `undefined` to pass it on: it is then answered as an unclaimed request (the host's `onRequest`, else 404).
 */
export type RouteHandler = (request: Request, path: string) => Response | undefined | Promise<Response | undefined>;
/** What the socket owner tells a frame handler about the connection a frame came from. */
export interface FrameContext {
  /** Whether the connection may not change synced state. */
  readonly readonly: boolean;
  /** The `Origin` header of its upgrade, when sent (the page that opened it). */
  readonly origin?: string;
}
/** A protocol frame chosen per connection (already serialized), or `undefined` to send it nothing. */
export type ProtocolFrame = string | ((connection: Connection, context: FrameContext) => string | undefined);
/**
 * Handles one parsed text frame of a claimed type. Returning `false` means the
 * frame is not well-formed for this type and goes to the user's `onMessage`.
 */
export type FrameHandler = (
  connection: Connection,
  frame: Record<string, unknown>,
  context: FrameContext,
) => boolean | void | Promise<boolean | void>;
/** Adds a frame (already serialized) to a protocol-enabled connection's connect sequence. */
export type ConnectFrameSource = (connection: Connection) => string | undefined;
/** Work run by `start()`; receives the props the Worker routed with. */
export type StartHook = (props: Record<string, unknown> | undefined) => void | Promise<void>;
/** Work run when an alarm key claimed with `claimAlarm` is due. */
export type AlarmHook = () => void | Promise<void>;
/** Takes the object's alarm: runs due capability work, and `runHost` when the host's own alarm is due. */
export type AlarmRunner = (now: number, runHost: () => Promise<void>) => Promise<void>;
/** Work run by `lifecycle.destroy()`. */
export type DestroyHook = () => void | Promise<void>;

/**
 * The owner of hibernating sockets (the WebSockets capability): the lifecycle
 * hands it the platform's socket events. It runs its handlers in the object's
 * invocation context with the connection.
 */
export interface SocketOwner {
  /**
   * @returns false when the socket is not one of the owner's (the host accepted it); true when
   *   the message was handled; a promise while it is handled asynchronously
   */
  message(ws: WebSocket, message: string | ArrayBuffer): Promise<unknown> | boolean;
  /** @returns false when the socket is not one of the owner's */
  close(ws: WebSocket, code: number, reason: string, wasClean: boolean): Promise<boolean>;
  /** @returns false when the socket is not one of the owner's */
  error(ws: WebSocket, error: unknown): Promise<boolean>;
  /** Sends a serialized protocol frame to every protocol-enabled connection (none inside its connect sequence). */
  protocol(frame: ProtocolFrame): void;
  /** @returns what the owner knows of one of its connections (readonly, where its upgrade came from), or `undefined` for another socket */
  context(connection: Connection): FrameContext | undefined;
  /**
   * Claims a named per-connection slot, kept in each of the owner's connections across hibernation.
   * @throws DokitError DUPLICATE_CLAIM for a name taken on this object, RESERVED_NAME for one the owner uses itself
   */
  slot<T>(name: string, options?: SlotOptions<T>): ConnectionSlot<T>;
}

/** How a capability bounds and checks its per-connection slot ({@link Claims.slot}). */
export interface SlotOptions<T> {
  /** The largest value, as JSON, in UTF-8 bytes (default 4,096): a larger one is refused when set. */
  maxBytes?: number;
  /** Checks a stored value when it is read: one it refuses reads as `undefined` (a value stored by another version, or altered). */
  check?(value: unknown): value is T;
}

/**
 * A capability's named place on each connection: a small JSON value kept in the connection's
 * attachment, so it survives hibernation, bounded and checked by the capability that claimed it.
 */
export interface ConnectionSlot<T> {
  /** The slot's name, unique per object. */
  readonly name: string;
  /** @returns the connection's value, `undefined` when unset (or refused by the slot's check) */
  get(connection: Connection): T | undefined;
  /**
   * Stores the connection's value (`undefined` clears it).
   * @throws DokitError INVALID_ARGUMENT over `maxBytes`, ATTACHMENT_TOO_LARGE when the attachment cannot hold it
   */
  set(connection: Connection, value: T | undefined): void;
}

/** A set of client-callable methods: what every transport (rpc frames, Cap'n Web) calls through. */
export interface CallableSource {
  /** The names clients may call. */
  readonly methodNames: readonly string[];
  /**
   * Calls a method inside the caller's context.
   * @returns the method's result, or a promise of it (a synchronous method's result comes back as it is, so
   *   a transport answers it without a promise)
   * @throws what the method throws (or rejects with it), or a wire error
   */
  invoke(name: string, args: unknown[]): unknown;
}

/** Read access to the dispatch table, for the capabilities that route work through it. */
export interface Dispatch {
  /** @returns the claim for a frame type: one lookup in a null-prototype table */
  frame(type: string): FrameClaim | undefined;
  /** What capabilities add to a connection's connect sequence, in `use()` order (a source may add nothing). */
  readonly connectFrameSources: readonly ConnectFrameSource[];
  /** @returns the source serving a claimed client-callable method, if `name` is claimed */
  method(name: string): CallableSource | undefined;
  /** @returns the names of every claimed client-callable method */
  methodNames(): string[];
  /** Sends a serialized protocol frame (or one chosen per connection) to every protocol-enabled connection, through the socket owner (if any). */
  broadcastProtocol(frame: ProtocolFrame): void;
  /** @returns what the socket owner knows of a connection (readonly, where its upgrade came from), or `undefined` without one */
  connectionContext(connection: Connection): FrameContext | undefined;
  /**
   * Claims a per-connection slot from the socket owner (see {@link SocketOwner.slot}); call it once the object runs.
   * @throws DokitError NOT_INSTALLED without a socket owner (WebSockets)
   */
  connectionSlot<T>(name: string, options?: SlotOptions<T>): ConnectionSlot<T>;
  /** The installed event publisher (dokit/observability), if any: capabilities publish through it. */
  readonly observer: Observer | undefined;
}

/**
 * What capabilities publish events through (installed by dokit/observability's
 * `Observability`; docs/observability.md). The core knows channels only by name:
 * each capability builds its own payloads. Nothing is built unless a channel has
 * subscribers: callers ask `since` first and build a payload only then.
 */
export interface Observer {
  /** @returns the time now (ms since epoch) when `channel` has subscribers, else 0 (and reads no clock) */
  since(channel: string): number;
  /**
   * Publishes `type` on `channel` when it has subscribers. A `began` field (a `since` reading)
   * is published as `durationMs`, the time since then (0 stays 0); every other field as given.
   */
  emit(channel: string, source: Lifecycle, type: string, payload: object): void;
  /** Publishes `error` (or `type`) on the lifecycle channel when it has subscribers: where, the error's code and message. */
  error(source: Lifecycle, where: string, error: unknown, connectionId?: string, type?: string): void;
  /** Whether events may carry values (state values, frame bodies): `includeValues()` turns it on. */
  readonly values: boolean;
}

/** What a capability may claim, handed to {@link Capability.attach}. */
export interface Claims {
  /** The lifecycle being built. */
  readonly lifecycle: Lifecycle;
  /** The name of the capability being attached (its `capabilityName`), as errors show it. */
  readonly owner: string;
  /** Offers upgrades to `handler`, in `use()` order. */
  upgrade(handler: UpgradeHandler): void;
  /** Claims every upgrade nobody else took; at most one, always asked last. */
  catchAllUpgrade(handler: UpgradeHandler): void;
  /** Claims plain HTTP requests on `path` and below it (e.g. `/mcp`). */
  route(path: string, handler: RouteHandler): void;
  /**
   * Claims text frames whose JSON `type` is `type`. A `protocolOnly` frame (the state
   * frame) is dispatched only on protocol-enabled connections; elsewhere it is an
   * ordinary message for `onMessage`. The handler runs in the connection's invocation
   * context, unless `ownContext` says it enters that context itself around the user code
   * it calls (`inConnectionContext`; the rpc frame does, so it parses and answers outside).
   * `needsWiring` says that a frame of this type arriving at an object that waits to be wired
   * (lifecycle/wake.ts) wires it first, so the claim takes it: a capability that works unattached
   * declares it on every frame it claims (an object of a class with a claim that does not is wired as it is built).
   */
  frame(type: string, handler: FrameHandler, options?: FrameOptions): void;
  /** Claims a client-callable method name, served by `source` on every transport. */
  method(name: string, source: CallableSource): void;
  /** Adds frames to every protocol-enabled connection's connect sequence. */
  connectFrames(source: ConnectFrameSource): void;
  /** Takes the platform's socket events (one owner per object). */
  takeSockets(owner: SocketOwner): void;
  /** Work for `start()`, in `use()` order. */
  onStart(hook: StartHook): void;
  /**
   * Takes over the alarm entry point (one runner per object). Capabilities use
   * `claimAlarm(claims, key, hook)`, which installs the shared runner.
   */
  takeAlarm(runner: AlarmRunner): void;
  /** Work for `lifecycle.destroy()`, in `use()` order. */
  onDestroy(hook: DestroyHook): void;
  /** Installs another capability this one depends on (a no-op when already used). */
  use(capability: Capability): void;
  /** Makes the object publish events through `observer` (dokit/observability). */
  observe(observer: Observer): void;
  /** Reads the dispatch table once the object runs (claims are locked by then). */
  readonly dispatch: Dispatch;
}

/** How a frame type is claimed (see `Claims.frame`). */
export interface FrameOptions {
  /** Dispatched only on protocol-enabled connections. */
  protocolOnly?: boolean;
  /** The handler enters the connection's context itself. */
  ownContext?: boolean;
  /** A frame of this type arriving at an object that waits to be wired wires it first. */
  needsWiring?: boolean;
}

/** A frame claim: its handler and its options (absent is `false`). */
export interface FrameClaim extends Readonly<FrameOptions> {
  readonly handler: FrameHandler;
  /** The capability that claimed the frame type (events name it as the frame's handler). */
  readonly owner: string;
}

export type { Connection, ConnectionContext };
