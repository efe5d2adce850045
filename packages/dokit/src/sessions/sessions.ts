import type { Capability, Claims, Dispatch } from "../lifecycle/capability";
import { DokitError, errorMessage } from "../lifecycle/errors";
import type { Lifecycle } from "../lifecycle/lifecycle";
import { lifecycleOf } from "../lifecycle/wake";
import type { SessionsErrorCode } from "./errors";
import { SESSION } from "../protocol/sessions";
import { Session, type SessionsCore } from "./handle";
import { LiveHistory } from "./live";
import { SessionStore } from "./store";
import type { SessionChangeEvent, SessionChangeListener, SessionsOptions } from "./types";

/** The default `maxClientMessageBytes`: 1 MiB. */
export const DEFAULT_MAX_CLIENT_MESSAGE_BYTES = 1024 * 1024;
const MAX_CLIENT_LIMIT = 64 * 1024 * 1024;

/**
 * Durable conversation history for a Durable Object: `session(id)` hands out one handle per
 * conversation (cached), and `subscribe()` is the change feed of every session of the object.
 *
 * ```ts
 * readonly sessions = new Sessions();
 * readonly lifecycle = Lifecycle.install(this).use(this.sessions);
 * readonly session = this.sessions.session();
 * ```
 */
export class Sessions implements Capability, SessionsCore {
  readonly capabilityName = "Sessions";
  /** Metadata keys removed from client writes. */
  readonly reserved: ReadonlySet<string>;
  /** The largest client-sourced message, as JSON in UTF-8 bytes. */
  readonly maxClientMessageBytes: number;
  readonly #handles = new Map<string, Session>();
  readonly #listeners = new Set<SessionChangeListener>();
  #lifecycle: Lifecycle | undefined;
  #dispatch: Dispatch | undefined;
  readonly #live: LiveHistory;
  #store: SessionStore | undefined;
  /** The change feed's queue: each event waits for the previous one's listeners. */
  #feed: Promise<void> = Promise.resolve();

  /**
   * @param options - reserved metadata keys, the client message bound, and who may read over WebSockets
   * @throws DokitError INVALID_ARGUMENT for a `maxClientMessageBytes` out of range
   */
  constructor(options: SessionsOptions = {}) {
    this.reserved = new Set(options.reservedMetadataKeys ?? []);
    const max = options.maxClientMessageBytes ?? DEFAULT_MAX_CLIENT_MESSAGE_BYTES;
    if (!Number.isInteger(max) || max < 1 || max > MAX_CLIENT_LIMIT) {
      throw new DokitError<SessionsErrorCode>("INVALID_ARGUMENT", `maxClientMessageBytes must be an integer from 1 to ${MAX_CLIENT_LIMIT}, not ${String(max)}`);
    }
    this.maxClientMessageBytes = max;
    this.#live = new LiveHistory(this, options.access);
  }

  attach(claims: Claims): void {
    this.#lifecycle = claims.lifecycle;
    this.#dispatch = claims.dispatch;
    // {"type":"dokit_session","op",…}: live history, on protocol-enabled connections (docs/sessions.md).
    claims.frame(SESSION, (connection, frame, context) => this.#live.receive(connection, frame, context), { protocolOnly: true });
    this.#live.dispatch = claims.dispatch;
  }

  /**
   * The handle of one session ("" by default: one conversation per object). Handles are cached, so what
   * is set on one (its compaction) holds for every later call with the same id.
   */
  session(sessionId = ""): Session {
    let handle = this.#handles.get(sessionId);
    if (!handle) {
      handle = new Session(sessionId, this);
      this.#handles.set(sessionId, handle);
    }
    return handle;
  }

  /**
   * Adds a listener to the change feed: every committed write of every session of this object, in
   * write order, in this isolate. A listener that throws is logged and the feed goes on.
   * @returns the function that removes it
   */
  subscribe(listener: SessionChangeListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** @internal The storage engine, made on first use. */
  store(): SessionStore {
    if (this.#store) return this.#store;
    const lifecycle = lifecycleOf(this, this.#lifecycle);
    if (!lifecycle) {
      throw new DokitError<SessionsErrorCode>("NOT_INSTALLED", "these Sessions are not installed yet: Lifecycle.install(this).use(sessions)");
    }
    return (this.#store = new SessionStore(lifecycle.ctx));
  }

  /** @internal Dispatches one event to every listener, after the events before it. */
  notify(event: SessionChangeEvent): Promise<void> {
    const run = this.#feed.then(() => this.#dispatchEvent(event));
    this.#feed = run;
    return run;
  }

  async #dispatchEvent(event: SessionChangeEvent): Promise<void> {
    // Watching connections first: they see changes in the feed's order too.
    if (this.#dispatch) {
      try {
        this.#live.broadcast(this.#dispatch, event);
      } catch (error) {
        this.report("live broadcast", error);
      }
    }
    for (const listener of [...this.#listeners]) {
      try {
        await listener(event);
      } catch (error) {
        this.report("change listener", error);
      }
    }
  }

  /** @internal Logs a failure that does not fail the call it happened in, and publishes it as `session:error` (dokit/observability). */
  report(where: string, error: unknown): void {
    console.error(`dokit: Sessions ${where} failed: ${errorMessage(error)}`);
    const observer = this.#dispatch?.observer;
    const lifecycle = lifecycleOf(this, this.#lifecycle);
    if (observer && lifecycle) observer.error(lifecycle, `Sessions ${where}`, error, undefined, "session:error");
  }
}
