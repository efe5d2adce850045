// AgentClient: one logical connection to one object, over a succession of
// sockets (links). Reconnection, per-socket call books and the state a client
// sends live here; URL building, links, pending calls and what the server's
// frames do are in their own files.
import { type MCPServersState, STATE } from "../protocol/frames";
import { kebab } from "../protocol/kebab";
import { MIN_UPTIME_MS, reconnectDelay } from "./backoff";
import { asBinaryType, byteSize } from "./binary";
import type { AgentClientMessage, BinaryType } from "./binary";
import { asError, DEFAULT_CALL_TIMEOUT_MS, invokeNative, PendingCall, splitCallOptions } from "./calls";
import { AgentConnectionError, isFinalCloseCode } from "./errors";
import { Heartbeat, heartbeatSettings } from "./heartbeat";
import { enqueue, type Outgoing } from "./outbox";
import { ClientEventTarget, closeEvent } from "./event-target";
import { openJsonLink } from "./link";
import type { Link, OpenLink } from "./link";
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
import { socketUrl, withProperties } from "./url";


/** @returns a fresh promise with its resolver */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * A reconnecting client for one Durable Object speaking the Agents protocol.
 * Events: `open`, `message` (every frame, after the client has handled it), `close`, `error`.
 * WebSocket-shaped like the official client: `readyState`, `url`, `binaryType`,
 * `bufferedAmount`, `on<event>` properties, `send`, `close`, `reconnect`.
 */
export class AgentClient<T = unknown, State = unknown> extends ClientEventTarget {
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

  #options: AgentClientOptions<State>;
  #id: string;
  /** The URL of the latest connection attempt. */
  #url = "";
  /** Set while the next socket's URL is being built. */
  #preparing = false;
  #link: Link | null = null;
  #open = false;
  /** Set by `close()` and by a final close; cleared by `reconnect()`. */
  #closed = false;
  #attempt = 0;
  #openedAt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The open socket's heartbeat, when the option is on. */
  #heartbeat: Heartbeat | undefined;
  /** Bumped whenever a pending connection attempt must be abandoned. */
  #generation = 0;
  readonly #calls = new Map<string, PendingCall>();
  #outbox: Outgoing[] = [];
  #ready = deferred();
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
    if (!options.startClosed) this.#connect();
  }

  /** Resolves when the current socket is identified (after the state frame when one follows); renewed per socket. */
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
    if (this.#closed) return ClientEventTarget.CLOSED;
    if (this.#link) return this.#link.socket.readyState;
    return this.#preparing ? ClientEventTarget.CONNECTING : ClientEventTarget.CLOSED;
  }

  /** The URL of the current (or last) socket, with `_pk` and the query; `""` before the first attempt. */
  get url(): string {
    return this.#url;
  }

  /** Bytes given to `send()` and not yet on the wire: queued while not open, plus the socket's own buffer. */
  get bufferedAmount(): number {
    let queued = 0;
    for (const item of this.#outbox) if (!(item instanceof PendingCall)) queued += byteSize(item);
    return queued + (this.#link?.socket.bufferedAmount ?? 0);
  }

  /**
   * Replaces the state: applied here at once, sent to the server once the
   * socket is identified, and rolled back to the server's last value if the
   * server refuses it.
   * @param state - the new state
   */
  setState(state: State): void {
    this.state = state;
    if (this.identified && this.#link) this.#link.send(JSON.stringify({ type: STATE, state }));
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
    if (this.#open && this.#link) {
      this.#link.send(data);
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
    this.#closed = true;
    this.#preparing = false;
    this.#generation++;
    clearTimeout(this.#timer);
    this.#rejectAll();
    const link = this.#link;
    if (link) {
      this.#drop(link);
      link.close(code, reason);
      this.dispatchEvent(closeEvent(code, reason ?? "", true));
    }
    this.#notify();
  }

  /**
   * Connects again now: after `close()`, after a final close, with `startClosed`, or instead of waiting for backoff.
   * A socket still open or opening is closed first, with a `close` event dispatched at once.
   * @param code - close code for that socket (default 1000)
   * @param reason - close reason for that socket (default `"Reconnecting"`)
   */
  reconnect(code = 1000, reason = "Reconnecting"): void {
    this.#closed = false;
    this.connectionError = null;
    this.#attempt = 0;
    clearTimeout(this.#timer);
    const link = this.#link;
    if (link) {
      this.#drop(link);
      link.close(code, reason);
      this.dispatchEvent(closeEvent(code, reason, true));
    }
    this.#connect();
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
    if (this.#closed) {
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
    const link = this.#link;
    if (!link || !this.#open) {
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

  // ── Connection loop ────────────────────────────────────────────────

  #connect(): void {
    const generation = ++this.#generation;
    this.#preparing = true;
    void (async () => {
      let url: string;
      let open: OpenLink;
      try {
        url = await socketUrl(this.options, this.id);
        open = this.options.transport === "capnweb" ? (await import("./capnweb-link")).openCapnWebLink : openJsonLink;
      } catch (error) {
        // A failing `query()` (say, a token fetch) is retried with backoff like a failed socket.
        if (generation !== this.#generation) return;
        this.#preparing = false;
        console.error("dokit: could not prepare the connection", error);
        this.dispatchEvent(new Event("error"));
        return this.#retry(new AgentConnectionError(1006, String(error), false));
      }
      if (generation !== this.#generation || this.#closed) return;
      let link: Link;
      try {
        link = open(url, {
          onOpen: () => this.#onOpen(link),
          onFrame: (data) => this.#onFrame(link, data),
          onClose: (code, reason, wasClean) => this.#onClose(link, code, reason, wasClean),
          onError: () => link === this.#link && this.dispatchEvent(new Event("error")),
        });
      } catch (error) {
        // The WebSocket constructor throws only for a malformed URL: retrying cannot help.
        this.#preparing = false;
        return this.#end(new AgentConnectionError(1006, String(error), false));
      }
      this.#preparing = false;
      this.#url = url;
      this.#link = link;
      this.#timer = setTimeout(() => {
        if (this.#link !== link || this.#open) return;
        this.#onClose(link, 1006, "Connection timed out", false);
        link.close();
      }, this.options.connectionTimeout ?? 4000);
    })();
  }

  #onOpen(link: Link): void {
    if (link !== this.#link) return;
    clearTimeout(this.#timer);
    this.#open = true;
    this.#openedAt = Date.now();
    this.connectionError = null;
    this.#startHeartbeat(link);
    const outbox = this.#outbox;
    this.#outbox = [];
    for (const item of outbox) {
      if (item instanceof PendingCall) this.#dispatch(item);
      else link.send(item);
    }
    this.dispatchEvent(new Event("open"));
    this.#notify();
  }

  #onClose(link: Link, code: number, reason: string, wasClean: boolean): void {
    if (link !== this.#link) return;
    const uptime = this.#open ? Date.now() - this.#openedAt : 0;
    this.#drop(link);
    if (!this.#closed) {
      const error = new AgentConnectionError(code, reason, wasClean);
      if (isFinalCloseCode(code)) this.#end(error);
      else {
        if (uptime >= MIN_UPTIME_MS) this.#attempt = 0;
        this.#retry(error);
      }
    }
    this.dispatchEvent(closeEvent(code, reason, wasClean));
    this.#notify();
  }

  /** Forgets a socket: its calls reject with `Connection closed`, `ready` is renewed. */
  #drop(link: Link): void {
    this.#link = null;
    this.#open = false;
    clearTimeout(this.#timer);
    this.#heartbeat?.stop();
    this.#heartbeat = undefined;
    this.identified = false;
    this.#frames.reset();
    this.#ready = deferred();
    for (const call of this.#calls.values()) {
      if (call.link === link) call.fail(new Error("Connection closed"));
    }
  }

  /** Schedules the next attempt, or ends the connection when retries are spent. */
  #retry(error: AgentConnectionError): void {
    this.#attempt++;
    if (this.#attempt > (this.options.maxRetries ?? Number.POSITIVE_INFINITY)) return this.#end(error);
    this.#timer = setTimeout(() => this.#connect(), reconnectDelay(this.options, this.#attempt));
  }

  /** A final close: everything pending rejects, later calls reject at once. */
  #end(error: AgentConnectionError): void {
    this.#closed = true;
    this.#rejectAll();
    this.connectionError = error;
    this.options.onConnectionError?.(error);
  }

  // ── Frames ─────────────────────────────────────────────────────────

  /** Pings on the open socket; a ping left unanswered closes it (1006 `Heartbeat timed out`) and the client reconnects. */
  #startHeartbeat(link: Link): void {
    const settings = link.invoke ? undefined : heartbeatSettings(this.options);
    if (!settings) return;
    this.#heartbeat = new Heartbeat(
      settings,
      () => link.send(settings.ping),
      () => {
        if (link !== this.#link) return;
        this.#onClose(link, 1006, "Heartbeat timed out", false);
        link.close();
      },
    );
  }

  #onFrame(link: Link, data: unknown): void {
    if (link !== this.#link) return;
    const heartbeat = this.#heartbeat;
    if (heartbeat) {
      heartbeat.alive();
      // The server's answer to a ping is no message.
      if (data === heartbeat.pong) return;
    }
    if (typeof data === "string") this.#frames.read(data);
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
    this.#ready.resolve();
    this.#notify();
  }

  #notify(): void {
    for (const listener of this.#listeners) listener();
  }
}
