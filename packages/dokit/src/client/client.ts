// AgentClient: one logical connection to one object, over a succession of
// sockets (links). Per-socket call books, the queue of what waits for a socket
// and the state a client sends live here; the connection loop, URL building,
// links, pending calls, presence and what the server's frames do are in their
// own files.
import type { MCPServersState } from "../protocol/mcp-client";
import { STATE } from "../protocol/agents";
import { kebab } from "../protocol/kebab";
import { asBinaryType, byteSize } from "./binary";
import type { AgentClientMessage, BinaryType } from "./binary";
import { asError, DEFAULT_CALL_TIMEOUT_MS, invokeNative, PendingCall, splitCallOptions } from "./calls";
import { ConnectionLoop } from "./connection";
import { AgentConnectionError } from "./errors";
import { enqueue, type Outgoing } from "./outbox";
import { ClientEventTarget } from "./event-target";
import type { Link } from "./link";
import { ClientPresence } from "./presence";
import { ClientStreams } from "./streams";
import { type Identity, serverFrames } from "./server-frames";
import { createStub } from "./stub";
import type {
  AgentCall,
  AgentClientOptions,
  AgentClientProperties,
  AgentClientStub,
  CallOptions,
  StreamOptions,
} from "./types";
import { withProperties } from "./url";

/** A `ready` promise with its settlers; `rejected` once it has been rejected. */
interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: Error) => void;
  rejected: boolean;
}

/** @returns a fresh `ready` promise with its settlers, already marked handled: a rejection nobody awaits must not crash Node */
function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => {});
  const ready: Deferred = { promise, resolve, reject: (error) => ((ready.rejected = true), reject(error)), rejected: false };
  return ready;
}

/**
 * A reconnecting client for one Durable Object speaking the Agents protocol.
 * Events: `open`, `message` (every frame, after the client has handled it), `close`, `error`.
 * WebSocket-shaped like the official client: `readyState`, `url`, `binaryType`,
 * `bufferedAmount`, `on<event>` properties, `send`, `close`, `reconnect`.
 * `Presence` is the type of the values in `client.presence`.
 */
export class AgentClient<T = unknown, State = unknown, Presence = unknown> extends ClientEventTarget {
  /** The kebab-case agent name (updated from the server's identity). */
  agent: string;
  /** The object's name (updated from the server's identity). */
  name: string;
  /** The synced state; `undefined` until the server sends one. */
  state: State | undefined = undefined;
  /** The object's MCP servers and their catalogue (the last `cf_agent_mcp_servers`); `undefined` until one arrives. */
  mcp: MCPServersState | undefined = undefined;
  /** Whether the current socket has received its identity (and the state that follows it). */
  identified = false;
  /** Why the connection ended for good, when it did so without `close()`. */
  connectionError: AgentConnectionError | null = null;
  /** Calls a method: `call(method, args, { timeout, stream })`. */
  readonly call: AgentCall<T>;
  /** A proxy on which every method of the callables class is an async function. */
  readonly stub: AgentClientStub<T>;
  /** How binary frames arrive in `message` events: `"blob"` (default, as on a WebSocket) or `"arraybuffer"`. */
  binaryType: BinaryType = "blob";
  /** Who else is connected, each with a value (`dokit/presence` on the server); sends nothing until used. */
  readonly presence: ClientPresence<Presence> = new ClientPresence<Presence>({
    sendNow: (frame) => this.#loop.open && (this.#loop.link?.send(frame), true),
    refused: (error) => (this.options.onPresenceError ?? ((e) => console.warn(`dokit: presence value refused: ${e}`)))(error),
  });

  /** Readers of the object's streams (`dokit/streams`): `client.streams.read(id, { from })`; sends nothing until used. */
  readonly streams: ClientStreams = new ClientStreams({
    sendNow: (frame) => this.#loop.open && (this.#loop.link?.send(frame), true),
  });

  #options: AgentClientOptions<State>;
  #id: string;
  readonly #loop: ConnectionLoop = new ConnectionLoop({
    // SAFETY: the loop reads only options that do not depend on the state type.
    options: () => this.#options as AgentClientOptions<never>,
    id: () => this.#id,
    dispatchEvent: (event) => this.dispatchEvent(event),
    opened: (link) => this.#opened(link),
    frame: (data) => this.#onFrame(data),
    dropped: (link) => this.#drop(link),
    stopped: (error) => this.#stopped(error),
    connectFailed: (error, retry) => this.#connectFailed(error, retry),
    changed: () => this.#notify(),
  });
  readonly #calls = new Map<string, PendingCall>();
  #outbox: Outgoing[] = [];
  #ready = deferred();
  /** Why the connection stopped for good (what `ready` rejects with); `null` while it runs. */
  #stopReason: Error | null = null;
  /** The `readyTimeout` timer of the current `ready`. */
  #readyTimer: ReturnType<typeof setTimeout> | undefined;
  /** Whether the attempts since the last open socket have already been reported by the default warning. */
  #failureWarned = false;
  #unsentState: { value: State } | null = null;
  readonly #listeners = new Set<() => void>();
  readonly #frames = serverFrames<State>(this, this.#calls, (identity) => (identity ? this.#identify(identity) : this.#notify()));

  /**
   * @param options - where to connect and how to behave
   */
  constructor(options: AgentClientOptions<State>) {
    super();
    this.#options = options;
    this.agent = kebab(options.agent);
    this.name = options.name ?? "default";
    this.#id = options.id || crypto.randomUUID();
    // SAFETY: the untyped and typed call signatures are both served by #call, which takes any name and args.
    this.call = ((method: string, args?: unknown[], callOptions?: CallOptions | StreamOptions) =>
      this.#call(method, args ?? [], splitCallOptions(callOptions))) as AgentCall<T>;
    this.stub = createStub<AgentClientStub<T>>((method, args) => this.#call(method, args, undefined));
    if (!options.startClosed) {
      this.#armReadyTimeout();
      this.#loop.connect();
    }
  }

  /**
   * Resolves when a socket is identified (after the state frame when one follows); renewed when an identified
   * socket is lost, and kept through attempts that fail before that.
   * Rejects when the connection ends first: with the `AgentConnectionError` of a final close (a refusal, spent
   * retries, `readyTimeout`), or `Connection closed` after `close()`; `reconnect()` gives a fresh one.
   */
  get ready(): Promise<void> {
    return this.#ready.promise;
  }

  /** The options the client was made with, as changed by `updateProperties()`. */
  get options(): AgentClientOptions<State> {
    return this.#options;
  }

  /** The connection id, sent as `_pk` on every connection attempt. */
  get id(): string {
    return this.#id;
  }

  /**
   * `OPEN` while a socket is open; `CONNECTING` from the start of an attempt
   * until its socket opens; `CLOSING` while the server closes it; `CLOSED`
   * after `close()`, a final close, with `startClosed`, and while waiting to
   * reconnect (as PartySocket reports it).
   */
  get readyState(): number {
    return this.#loop.readyState;
  }

  /** The URL of the current (or last) socket, with `_pk` and the query; `""` before the first attempt. */
  get url(): string {
    return this.#loop.url;
  }

  /** Bytes given to `send()` and not yet on the wire: queued while not open, plus the socket's own buffer. */
  get bufferedAmount(): number {
    let queued = 0;
    for (const item of this.#outbox) if (!(item instanceof PendingCall)) queued += byteSize(item);
    return queued + (this.#loop.link?.socket.bufferedAmount ?? 0);
  }

  /**
   * Replaces the state: applied here at once, sent to the server once the
   * socket is identified, and rolled back to the server's last value if the
   * server refuses it.
   * @param state - the new state
   */
  setState(state: State): void {
    this.state = state;
    if (this.identified && this.#loop.link) this.#loop.link.send(JSON.stringify({ type: STATE, state }));
    else this.#unsentState = { value: state };
    this.options.onStateUpdate?.(state, "client");
    this.#notify();
  }

  /**
   * Sends an ordinary message; queued while the socket is not open.
   * @param data - text, bytes or a Blob
   * @returns whether it went out on an open socket (`false`: queued for the next one)
   */
  send(data: AgentClientMessage): boolean {
    if (this.#loop.open && this.#loop.link) {
      this.#loop.link.send(data);
      return true;
    }
    enqueue(this.#outbox, data, this.options);
    return false;
  }

  /**
   * Closes the connection for good: pending calls reject with `Connection closed`, and so do later calls.
   * The `close` event is dispatched at once, before this returns.
   * @param code - close code (default 1000)
   * @param reason - close reason
   */
  close(code = 1000, reason?: string): void {
    this.#loop.close(code, reason);
    this.#notify();
  }

  /**
   * Connects again now: after `close()`, after a final close, with `startClosed`, or instead of waiting for backoff.
   * A socket still open or opening is closed first, with a `close` event dispatched at once.
   * @param code - close code for that socket (default 1000)
   * @param reason - close reason for that socket (default `"Reconnecting"`)
   */
  reconnect(code = 1000, reason = "Reconnecting"): void {
    this.connectionError = null;
    this.#stopReason = null;
    if (this.#ready.rejected) this.#ready = deferred();
    if (!this.identified) this.#armReadyTimeout();
    this.#loop.reconnect(code, reason);
    this.#notify();
  }

  /**
   * Changes where and how the next connection attempt connects; the current
   * socket is kept until it closes or `reconnect()` is called. Keys left out
   * or `undefined` are unchanged; the `id` is kept unless one is given.
   * @param properties - address, query, id or reconnect tuning; `room`/`party` as PartySocket names them
   */
  updateProperties(properties: AgentClientProperties): void {
    this.#options = withProperties(this.#options, properties);
    if (properties.id) this.#id = properties.id;
    this.agent = kebab(this.#options.agent);
    this.name = this.#options.name ?? "default";
    this.#notify();
  }

  /**
   * Registers a callback run after the state, `identified`, `ready` or the connection changes.
   * @returns a function that removes it
   */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  // ── Calls ──────────────────────────────────────────────────────────

  #call(method: string, args: unknown[], options: CallOptions | undefined): Promise<never> {
    if (this.#loop.closed) {
      options?.stream?.onError?.("Connection closed");
      return Promise.reject(new Error("Connection closed"));
    }
    return new Promise((resolve, reject) => {
      const timeout = this.options.defaultCallTimeout ?? DEFAULT_CALL_TIMEOUT_MS;
      // SAFETY: the result type is declared by the caller's `AgentCall<T>` signature.
      const promise = { resolve: resolve as (value: unknown) => void, reject };
      const call = new PendingCall(method, args, options, timeout, promise, (settled) => {
        this.#calls.delete(settled.id);
        const queued = this.#outbox.indexOf(settled);
        if (queued !== -1) this.#outbox.splice(queued, 1);
      });
      this.#calls.set(call.id, call);
      this.#dispatch(call);
    });
  }

  /** Sends a call on the open socket, or queues it for the next one. */
  #dispatch(call: PendingCall): void {
    const link = this.#loop.link;
    if (!link || !this.#loop.open) {
      enqueue(this.#outbox, call, this.options);
      return;
    }
    call.link = link;
    if (link.invoke) return invokeNative(link.invoke, call);
    try {
      link.send(call.frame());
    } catch (error) {
      call.fail(asError(error)); // e.g. arguments JSON.stringify cannot encode
    }
  }

  #rejectAll(): void {
    for (const call of this.#calls.values()) call.fail(new Error("Connection closed"));
    this.#outbox = this.#outbox.filter((item) => !(item instanceof PendingCall));
  }

  // ── Sockets (the loop is in connection.ts) ─────────────────────────

  /** A socket opened: what waited for it goes out in order, then presence. */
  #opened(link: Link): void {
    this.connectionError = null;
    this.#failureWarned = false;
    const outbox = this.#outbox;
    this.#outbox = [];
    for (const item of outbox) {
      if (item instanceof PendingCall) this.#dispatch(item);
      else link.send(item);
    }
    this.presence.opened();
    this.streams.opened();
    this.dispatchEvent(new Event("open"));
    this.#notify();
  }

  /**
   * Forgets a socket: its calls reject with `Connection closed`; `ready` is renewed when this socket
   * had settled it (a promise already handed out keeps waiting through failed attempts).
   */
  #drop(link: Link): void {
    const settled = this.identified;
    this.identified = false;
    this.#frames.reset();
    if (settled) {
      this.#ready = deferred();
      if (this.#stopReason) this.#ready.reject(this.#stopReason);
      else this.#armReadyTimeout();
    }
    for (const call of this.#calls.values()) {
      if (call.link === link) call.fail(new Error("Connection closed"));
    }
  }

  /** The connection stopped for good: everything pending rejects, later calls reject at once. */
  #stopped(error: AgentConnectionError | null): void {
    this.#rejectAll();
    this.presence.stopped();
    clearTimeout(this.#readyTimer);
    this.#stopReason = error ?? new Error("Connection closed");
    if (!this.identified) this.#ready.reject(this.#stopReason);
    this.streams.stopped();
    if (!error) return;
    this.connectionError = error;
    this.options.onConnectionError?.(error);
  }

  /** An attempt never opened: the app's handler, or one warning per run of failures. */
  #connectFailed(error: AgentConnectionError, retry: { attempt: number; delayMs: number }): void {
    const handler = this.options.onConnectFailure;
    if (handler) return handler(error, retry);
    if (this.#failureWarned) return;
    this.#failureWarned = true;
    console.warn(`${error.message}; retrying with backoff until it connects (onConnectFailure reports every attempt; readyTimeout or maxRetries give up)`);
  }

  /** Starts the `readyTimeout` of the current `ready` over (when the option is set): a new wait counts from now. */
  #armReadyTimeout(): void {
    const ms = this.options.readyTimeout;
    clearTimeout(this.#readyTimer);
    if (!ms || ms <= 0 || !Number.isFinite(ms)) return;
    const ready = this.#ready;
    this.#readyTimer = setTimeout(() => {
      if (ready !== this.#ready || this.identified || this.#loop.closed) return;
      const last = this.#loop.lastFailure;
      const why = `dokit: not connected within ${ms} ms${last ? `: ${last.message.replace(/^dokit: /, "")}` : ""}`;
      this.#loop.giveUp(new AgentConnectionError(last?.code ?? 1006, why, false));
    }, ms);
  }

  #onFrame(data: unknown): void {
    if (typeof data === "string" && !this.streams.frame(data)) this.#frames.read(data);
    this.dispatchEvent(new MessageEvent("message", { data: asBinaryType(data, this.binaryType) }));
  }

  #identify(identity: Identity): void {
    this.identified = true;
    this.name = identity.name;
    this.agent = identity.agent;
    const unsent = this.#unsentState;
    this.#unsentState = null;
    this.options.onIdentity?.(identity.name, identity.agent);
    if (unsent) this.setState(unsent.value);
    clearTimeout(this.#readyTimer);
    this.#ready.resolve();
    this.#notify();
  }

  #notify(): void {
    for (const listener of this.#listeners) listener();
  }
}
