// The client side of live session history (dokit/sessions on the server): one branch of one session,
// loaded newest page first, older pages on demand, and kept current by the session's changes, which
// the server sends to connections that watch it. Built on an AgentClient's frames, like RoomMember:
// every socket that opens asks again (watch, then the newest page), so a reconnect resynchronizes.
import { DOKIT_ERROR } from "../protocol/dokit-error";
import { SESSION, type WireMessage, type WireSessionEvent } from "../protocol/sessions";

/** A message as the server sends it: a session message whose `createdAt`, when it has one, is an ISO string. */
export type SessionViewMessage = WireMessage;

/** What a SessionView needs of its client: an AgentClient is one. */
export interface SessionViewClient {
  readonly readyState: number;
  send(data: string): boolean;
  addEventListener(type: "open" | "close" | "message", listener: (event: Event) => void): void;
  removeEventListener(type: "open" | "close" | "message", listener: (event: Event) => void): void;
}

/** Options of {@link SessionView}. */
export interface SessionViewOptions {
  /** The session ("" by default, the object's one conversation). */
  session?: string;
  /** Follow the branch that ends at this message instead of the session's active leaf. */
  leafId?: string;
  /** Most messages per page (the server allows at most 200; default 50). */
  pageSize?: number;
  /** Most bytes per page (the server allows at most 4 MiB; default 1 MiB); a larger message comes alone. */
  pageBytes?: number;
  /** A refusal from the server (`SESSION_FORBIDDEN`, `SESSION_REJECTED`, `MESSAGE_TOO_LARGE`) not tied to a write of this view. */
  onError?: (error: { code: string; error: string }) => void;
}

/** A write the server refused, or that the connection lost before its answer. */
export class SessionWriteError extends Error {
  override readonly name = "SessionWriteError";
  /** The server's code (`SESSION_FORBIDDEN`, `SESSION_REJECTED`, `MESSAGE_TOO_LARGE`), or `CONNECTION_CLOSED`. */
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

type Pending = { resolve(frame: Record<string, unknown>): void; reject(error: SessionWriteError): void; kind: "reload" | "older" | "write" };

const OPEN = 1;

/**
 * One branch of a session, live: `messages` holds the newest page (root → leaf order) and the older pages
 * loaded with `loadMore()`; appends and updates arrive as they are written. Reads need the connection to
 * be allowed to read the session; `append`/`update` need it to be allowed to write (never readonly).
 */
export class SessionView {
  /** The session followed. */
  readonly session: string;
  /** The messages loaded, root → leaf; a new array on every change. */
  messages: SessionViewMessage[] = [];
  /** Whether older messages than those loaded exist on the branch. */
  hasMore = false;
  /** Whether the newest page has arrived since the last (re)connection or `follow()`. */
  loaded = false;
  readonly #client: SessionViewClient;
  readonly #options: SessionViewOptions;
  #leafId: string | undefined;
  readonly #pending = new Map<string, Pending>();
  readonly #listeners = new Set<() => void>();
  /** The id of the newest reload asked: an older reload's page is stale when it arrives. */
  #reload: string | undefined;
  #next = 0;
  #started = false;
  readonly #onOpen = () => this.#resync();
  readonly #onClose = () => this.#dropPending();
  readonly #onMessage = (event: Event) => {
    const data = (event as MessageEvent).data;
    if (typeof data === "string") this.#read(data);
  };

  /** @param client - the connection (an AgentClient); the view starts at once */
  constructor(client: SessionViewClient, options: SessionViewOptions = {}) {
    this.#client = client;
    this.#options = options;
    this.session = options.session ?? "";
    this.#leafId = options.leafId;
    this.start();
  }

  /** The leaf of the branch followed; `undefined` while following the session's active leaf. */
  get leafId(): string | undefined {
    return this.#leafId;
  }

  /** Starts (again, after `stop()`): listens to the client and, when it is open, watches and loads the newest page. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#client.addEventListener("open", this.#onOpen);
    this.#client.addEventListener("close", this.#onClose);
    this.#client.addEventListener("message", this.#onMessage);
    if (this.#client.readyState === OPEN) this.#resync();
  }

  /** Stops following: no more changes arrive (the server is told), pending requests reject. */
  stop(): void {
    if (!this.#started) return;
    this.#started = false;
    this.#client.removeEventListener("open", this.#onOpen);
    this.#client.removeEventListener("close", this.#onClose);
    this.#client.removeEventListener("message", this.#onMessage);
    if (this.#client.readyState === OPEN) this.#client.send(JSON.stringify({ type: SESSION, op: "unwatch", session: this.session }));
    this.#dropPending();
  }

  /** Follows another branch (the one ending at `leafId`), or the active leaf with `undefined`; reloads. */
  follow(leafId: string | undefined): Promise<void> {
    this.#leafId = leafId;
    return this.#requestReload();
  }

  /** Loads the next older page in front of `messages`. Resolves at once when there is none. */
  async loadMore(): Promise<void> {
    const oldest = this.messages[0];
    if (!this.hasMore || !oldest) return;
    const frame = await this.#request("older", { op: "page", ...this.#pageFields(), before: oldest.id });
    // A reload since the request replaced what this page continues.
    if (this.messages[0]?.id !== oldest.id) return;
    const older = frame.messages as SessionViewMessage[];
    this.messages = [...older, ...this.messages];
    this.hasMore = frame.more === true;
    this.#changed();
  }

  /**
   * Appends a message (after the branch's leaf unless `parentId` says otherwise), as client input.
   * @returns whether it was stored (`false`: its id already was); it also arrives as a change
   */
  async append(message: SessionViewMessage, options: { parentId?: string | null } = {}): Promise<{ inserted: boolean }> {
    const parentId = options.parentId !== undefined ? options.parentId : this.#leafId !== undefined ? (this.messages.at(-1)?.id ?? this.#leafId) : undefined;
    const frame = await this.#request("write", { op: "append", session: this.session, message, ...(parentId !== undefined && { parentId }) });
    return { inserted: frame.inserted === true };
  }

  /** Rewrites a stored message. @returns whether it was stored (`false`: no such message) */
  async update(message: SessionViewMessage): Promise<{ found: boolean }> {
    const frame = await this.#request("write", { op: "update", session: this.session, message });
    return { found: frame.found === true };
  }

  /** Runs `listener` after every change of `messages`, `hasMore` or `loaded`. @returns the function that removes it */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  // ------------------------------------------------------------------ inside

  #pageFields(): Record<string, unknown> {
    return {
      session: this.session,
      ...(this.#leafId !== undefined && { leafId: this.#leafId }),
      ...(this.#options.pageSize !== undefined && { limit: this.#options.pageSize }),
      ...(this.#options.pageBytes !== undefined && { maxBytes: this.#options.pageBytes }),
    };
  }

  /** A socket opened (or the view started on an open one): watch, then load the newest page. */
  #resync(): void {
    this.#client.send(JSON.stringify({ type: SESSION, op: "watch", session: this.session }));
    void this.#requestReload().catch(() => undefined);
  }

  async #requestReload(): Promise<void> {
    if (this.#client.readyState !== OPEN) return;
    const id = this.#nextId();
    this.#reload = id;
    const frame = await this.#request("reload", { op: "page", ...this.#pageFields() }, id);
    if (this.#reload !== id) return;
    this.messages = frame.messages as SessionViewMessage[];
    this.hasMore = frame.more === true;
    this.loaded = true;
    this.#changed();
  }

  #nextId(): string {
    return `s${this.#next++}`;
  }

  #request(kind: Pending["kind"], fields: Record<string, unknown>, id = this.#nextId()): Promise<Record<string, unknown>> {
    if (this.#client.readyState !== OPEN) return Promise.reject(new SessionWriteError("CONNECTION_CLOSED", "dokit: the connection is not open"));
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, kind });
      this.#client.send(JSON.stringify({ type: SESSION, id, ...fields }));
    });
  }

  /** The socket closed: what waits for an answer rejects (a write may have been stored: appends are idempotent by id). */
  #dropPending(): void {
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      pending.reject(new SessionWriteError("CONNECTION_CLOSED", "dokit: the connection closed before the server answered"));
    }
    if (this.loaded) {
      this.loaded = false;
      this.#changed();
    }
  }

  #read(text: string): void {
    if (!text.startsWith('{"type":"dokit_')) return;
    let frame: Record<string, unknown>;
    try {
      frame = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    if (frame.session !== this.session) return;
    if (frame.type === DOKIT_ERROR) {
      const id = typeof frame.id === "string" ? frame.id : undefined;
      const pending = id !== undefined ? this.#pending.get(id) : undefined;
      const error = { code: String(frame.code), error: String(frame.error) };
      if (pending && id !== undefined) {
        this.#pending.delete(id);
        pending.reject(new SessionWriteError(error.code, `dokit: the server refused it: ${error.error}`));
        if (pending.kind === "write") return;
      }
      this.#options.onError?.(error);
      return;
    }
    if (frame.type !== SESSION) return;
    if (frame.op === "page" || frame.op === "ack") {
      const id = frame.id as string;
      const pending = this.#pending.get(id);
      this.#pending.delete(id);
      pending?.resolve(frame);
      return;
    }
    if (frame.op === "event") this.#apply(frame.event as WireSessionEvent);
  }

  /** A change of the session, applied to the branch followed. */
  #apply(event: WireSessionEvent): void {
    switch (event.type) {
      case "append": {
        if (!event.inserted || this.messages.some((message) => message.id === event.message.id)) return;
        const tail = this.messages.at(-1)?.id ?? null;
        const extends_ = this.loaded && event.parentId === tail && (tail !== null || (this.#leafId === undefined && !this.hasMore));
        if (extends_) {
          this.messages = [...this.messages, event.message];
          if (this.#leafId !== undefined) this.#leafId = event.message.id;
          this.#changed();
        } else if (this.#leafId === undefined) {
          // The active leaf moved to another branch.
          void this.#requestReload().catch(() => undefined);
        }
        return;
      }
      case "update": {
        const at = this.messages.findIndex((message) => message.id === event.message.id);
        if (at < 0) return;
        const next = this.messages.slice();
        next[at] = event.message;
        this.messages = next;
        this.#changed();
        return;
      }
      case "delete":
        if (this.messages.some((message) => event.messageIds.includes(message.id)) || this.#leafId === undefined) {
          if (this.#leafId !== undefined && event.messageIds.includes(this.#leafId)) this.#leafId = this.messages.filter((m) => !event.messageIds.includes(m.id)).at(-1)?.id;
          void this.#requestReload().catch(() => undefined);
        }
        return;
      case "clear":
        this.messages = [];
        this.hasMore = false;
        if (this.#leafId !== undefined) this.#leafId = undefined;
        this.#changed();
        return;
      case "import":
        if (this.#leafId === undefined) void this.#requestReload().catch(() => undefined);
        return;
      default:
        return;
    }
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }
}
