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
/** Answers a plain HTTP request on a claimed route. `path` is the path below the object's base. */
export type RouteHandler = (request: Request, path: string) => Response | Promise<Response>;
/**
 * Handles one parsed text frame of a claimed type. Returning `false` means the
 * frame is not well-formed for this type and goes to the user's `onMessage`.
 */
export type FrameHandler = (
  connection: Connection,
  frame: Record<string, unknown>,
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
 * The owner of hibernating sockets (the WebSockets capability). It runs its
 * handlers inside `runInContext({ agent, connection })`.
 */
export interface SocketOwner {
  /** @returns false when the socket is not one of the owner's (the host accepted it) */
  message(ws: WebSocket, message: string | ArrayBuffer): Promise<boolean>;
  close(ws: WebSocket, code: number, reason: string, wasClean: boolean): Promise<boolean>;
  error(ws: WebSocket, error: unknown): Promise<boolean>;
  /** Sends a protocol frame to every protocol-enabled connection, except `except`. */
  broadcastProtocol(frame: string, except?: Connection | "server" | null): void;
  /** @returns whether the connection's state frames are refused */
  isReadonly(connection: Connection): boolean;
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
   * ordinary message for `onMessage`.
   */
  frame(type: string, handler: FrameHandler, options?: { protocolOnly?: boolean }): void;
  /** Claims a client-callable method name. */
  method(name: string): void;
  /** Adds frames to every protocol-enabled connection's connect sequence. */
  connectFrames(source: ConnectFrameSource): void;
  /** Registers the owner of hibernating sockets (one per object). */
  sockets(owner: SocketOwner): void;
  /** Work for `start()`, in `use()` order. */
  onStart(hook: StartHook): void;
  /**
   * Takes over the alarm entry point (one runner per object). Capabilities use
   * `claimAlarm(claims, key, hook)`, which installs the shared runner.
   */
  alarms(runner: AlarmRunner): void;
  /** Work for `lifecycle.destroy()`, in `use()` order. */
  onDestroy(hook: DestroyHook): void;
  /** Installs another capability this one depends on (a no-op when already used). */
  use(capability: Capability): void;
}

export type { Connection, ConnectionContext };
