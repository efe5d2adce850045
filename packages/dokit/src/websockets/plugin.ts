// The door of a connection plug-in: how a capability that serves WebSockets' connections (its own
// frames, its own binary wire, its own per-connection data, a count of what each connection sends,
// its own transport) registers with them. WebSockets names no plug-in: it hands each one a small
// door when it is built (`built`: slots and protocol broadcasts), this door when it is attached, and
// calls its hooks. dokit's own (the state's sync, Presence, Yjs, the rate limit, the heartbeat,
// Cap'n Web) use it as a plug-in of yours would.
import type { Claims, ConnectionSlot, ProtocolFrame, SlotOptions } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import type { TransportHost, WebSocketHandlers } from "./options";
import type { WebSockets } from "./websockets";

/**
 * A plug-in of WebSockets' connections, passed as `new WebSockets({ plugins: [plugin] })`. Its
 * `onConnect`, `onClose` and `onError` run as handlers do, before every handler set (`onConnect`
 * after the connect frames), in the connection's context.
 * It claims frame types through `door.claims` (the lifecycle's claims: `frame`, `use`, `onDestroy`…)
 * and per-connection slots through `door.slot`, and WebSockets calls its hooks for every connection.
 *
 * ```ts
 * const typing: ConnectionPlugin = {
 *   pluginName: "typing",
 *   plug({ claims, slot: claim }) {
 *     const slot = claim<boolean>("typing", { maxBytes: 8 });
 *     claims.frame("typing", (connection, frame) => slot.set(connection, frame.on === true));
 *   },
 * };
 * ```
 */
export interface ConnectionPlugin extends Pick<WebSocketHandlers, "onConnect" | "onClose" | "onError"> {
  /** Unique among the WebSockets' plug-ins; `webSockets.plugin(name)` finds it. */
  readonly pluginName: string;
  /** Called once, when the WebSockets is attached: claim frame types and slots, keep the door. */
  plug(door: PluginDoor): void;
  /**
   * Called once, when the WebSockets is built, before it is attached (an object built on a wake is
   * attached only when an event needs it): claim here the slots that `drops` reads, so it counts
   * messages on an object that was not wired, and keep the protocol broadcast for what is sent from
   * any path (the state's changes).
   */
  built?(door: BuiltDoor): void;
  /** @returns whether an upgrade is for this plug-in's own wire: such a connection speaks no Agents protocol (no JSON frames reach it) */
  serves?(request: Request): boolean;
  /** A binary message: `true` claims it (no handler sees it). Runs in the connection's context, before every `onMessage`. */
  binary?(connection: Connection, message: ArrayBuffer): boolean;
  /** The server closed a connection (a client that never answers sends no close event): called at once, synchronously. */
  closing?(connection: Connection): void;
  /**
   * Counts one inbound message before anything else sees it (frame claims, `binary`, handlers):
   * `true` drops it (the plug-in told the client, or closed the connection). Runs on every message, outside
   * the connection's context (`getCurrentAgent()`): keep it cheap and synchronous.
   */
  drops?(connection: Connection, message: string | ArrayBuffer): boolean;
  /**
   * A socket was just accepted (it may not be a Connection yet): called in the turn of the runtime's
   * accept, before the connect frames, which wait for a returned promise (it must not reject).
   */
  accepted?(): void | Promise<void>;
  /** Fields the plug-in adds to the identity frame of the connect sequence (the state's `stateFollows`). */
  readonly identity?: Readonly<Record<string, unknown>>;
  /**
   * @returns a frame for the connect sequence of each protocol-enabled connection, sent right after the
   *   identity frame, before the frames capabilities add (`claims.connectFrames`); `undefined` sends none.
   *   It is given no connection, so a connection nothing else receives stays as the runtime made it.
   */
  connectFrame?(): string | undefined;
}

/** What WebSockets hands a plug-in when it is built (`built`): slots and protocol broadcasts, which need no attached lifecycle. */
export interface BuiltDoor extends Pick<PluginDoor, "slot"> {
  /**
   * Sends a protocol frame (text, or built per connection) to every protocol-enabled connection but
   * `except` and one inside its connect sequence (the state's changes), also on an object a wake has not wired.
   */
  protocol(frame: ProtocolFrame, except?: Connection | "server" | null): void;
}

/** What WebSockets hands a plug-in when it is attached. */
export interface PluginDoor {
  /** The lifecycle's claims: frame types (`frame`), capabilities it installs (`use`), hooks. */
  readonly claims: Claims;
  /**
   * Claims a per-connection slot named `name`: a small JSON value kept in each connection's attachment
   * across hibernation, bounded by `maxBytes` and checked by `check` when read.
   * @throws DokitError DUPLICATE_CLAIM for a name claimed already, RESERVED_NAME for one of dokit's own flags
   */
  slot<T>(name: string, options?: SlotOptions<T>): ConnectionSlot<T>;
  /** The WebSockets the plug-in serves: its connections, broadcasts, readonly marks. */
  readonly sockets: WebSockets;
  /**
   * Tells WebSockets the plug-in closed `socket` itself (the object's sockets are the plug-in's to
   * walk): a connection of these WebSockets leaves the open connections at once, and the plug-ins hear `closing`.
   */
  closed(socket: WebSocket): void;
  /**
   * The handle a transport plug-in (one that takes upgrades onto a wire of its own with `claims.upgrade`,
   * as Cap'n Web does) accepts, lists and serves its non-hibernating connections through, as hibernating sockets are.
   */
  transport(): TransportHost;
  /**
   * @returns the open connections whose upgrade the plug-in serves (`serves`), also after a wake:
   *   each is tagged for the plug-in when accepted, and they are found through the platform's tag
   *   index, without reading any other connection (hibernating sockets; a Cap'n Web session is never listed)
   */
  connections(): IterableIterator<Connection>;
}
