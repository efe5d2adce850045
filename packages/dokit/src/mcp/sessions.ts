import {
  type AuthInfo,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { DokitError } from "../lifecycle/errors";
import { SqlEventStore } from "./event-store";
import { INVALID_PARAMS, INVALID_REQUEST, isRequest, jsonRpcError, type RawMessage, SERVER_ERROR, SESSION_NOT_FOUND } from "./jsonrpc";
import { lowLevelOf } from "./server-shape";
import { watchStream } from "./stream-watch";
import { SessionStore } from "./session-store";
import type { Tables } from "./tables";
import type { McpErrorCode } from "./errors";
import { utf8Length } from "../utf8/size";

// The 2025-era lane: Streamable HTTP sessions (`Mcp-Session-Id`), served by
// the SDK's own WebStandardStreamableHTTPServerTransport, one transport and
// one fresh server per session.
//
// What a session needs after an eviction is one storage row: the client's
// `initialize` params (and its resource subscriptions). On the first request
// after a wake the session is rebuilt by replaying that `initialize` through
// a new transport whose id generator returns the stored id, so the SDK
// itself restores the session id, the negotiated version and the client's
// capabilities. Nothing of the replay reaches the client or the event log.
//
// Sessions are bounded, because `initialize` needs no credentials on a public
// endpoint: what one session stores (its `initialize` params and resource
// subscriptions) is at most `maxSessionSize` bytes; at most `maxSessions`
// exist per object, the least recently used ended first to make room; one
// unused for `sessionTtlMs` is expired. Expiry is lazy (checked when a session
// is used and swept when one starts), so no timer keeps the object awake.
//
// A session belongs to the identity it was created under (a digest of the
// routed props by default): a request made under another identity is answered
// as for an unknown session, so a leaked session id is useless to another user.

/** Builds a server for a session (the capability's factory, with the host and props filled in). */
export type SessionServerFactory = (request: Request, sessionId: string, authInfo: AuthInfo | undefined) => Promise<McpServer | Server>;

/** Settings of the legacy lane. */
export interface SessionSettings {
  keepAliveMs: number;
  maxRequestBodySize: number;
  maxEventsPerStream: number;
  sessionTtlMs: number;
  maxSessions: number;
  maxSessionSize: number;
}

/** One live 2025-era session. */
export class LegacySession {
  /** Resource URIs the client subscribed to with `resources/subscribe`. */
  readonly subscriptions = new Set<string>();
  /** True while the session is being rebuilt from storage. */
  restoring = false;
  lastSeen = Date.now();
  /** When `lastSeen` was last written to storage. */
  storedSeen = 0;

  constructor(
    /** The session id (`Mcp-Session-Id`). */
    readonly id: string,
    /** The identity the session was created under. */
    readonly owner: string,
    /** Bytes of the stored `initialize` params (counted against `maxSessionSize`). */
    readonly initSize: number,
    /** The session's own server instance. */
    readonly server: McpServer | Server,
    /** The SDK transport serving it. */
    readonly transport: WebStandardStreamableHTTPServerTransport,
    /** Its event log, when resumability is on. */
    readonly events: SqlEventStore | undefined,
  ) {}

  /** The low-level server (for notifications). */
  get lowLevel(): Server {
    return lowLevelOf(this.server);
  }
}

const RESTORE_ID = "dokit-session-restore";
/** The longest a session's use goes unrecorded in storage (shorter with a short TTL). */
const TOUCH_EVERY_MS = 60_000;


/** The live sessions of one object, and their rows in storage. */
export class LegacySessions {
  readonly #live = new Map<string, LegacySession>();
  readonly #opening = new Map<string, Promise<LegacySession | undefined>>();
  readonly #tables: Tables;
  readonly #store: SessionStore;
  readonly #settings: SessionSettings;
  readonly #factory: SessionServerFactory;
  readonly #report: (error: Error) => void;

  constructor(tables: Tables, settings: SessionSettings, factory: SessionServerFactory, report: (error: Error) => void) {
    this.#tables = tables;
    this.#store = new SessionStore(tables);
    this.#settings = settings;
    this.#factory = factory;
    this.#report = report;
  }

  /** The sessions in memory now. */
  get live(): Iterable<LegacySession> {
    return this.#live.values();
  }

  /**
   * Serves one 2025-era request.
   * @param body - the checked POST body (absent for GET / DELETE)
   */
  /**
   * Serves one 2025-era request.
   * @param body - the checked POST body (absent for GET / DELETE)
   * @param owner - the identity the request is made under
   */
  async handle(
    request: Request,
    body: { body: unknown; messages: RawMessage[] } | undefined,
    authInfo: AuthInfo | undefined,
    owner: string,
  ): Promise<Response> {
    const header = request.headers.get("mcp-session-id");
    const initialize = body?.messages.find((message) => message.method === "initialize" && isRequest(message));
    const options = { authInfo, ...(body && { parsedBody: body.body }) };
    if (initialize) {
      if (header) return jsonRpcError(400, INVALID_REQUEST, "Invalid Request: an initialize request must not carry Mcp-Session-Id");
      const init = JSON.stringify(initialize.params ?? {});
      const { maxSessionSize } = this.#settings;
      const initSize = utf8Length(init);
      if (initSize > maxSessionSize) {
        // SAFETY: checkBody let only requests with a string or number id through as requests.
        const id = initialize.id as string | number;
        return jsonRpcError(400, INVALID_PARAMS, `Invalid params: initialize params must not exceed ${maxSessionSize} bytes (maxSessionSize)`, id);
      }
      await this.#makeRoom();
      const session = await this.#open(crypto.randomUUID(), owner, request, authInfo, init, initSize);
      const response = await session.transport.handleRequest(request, options);
      if (!response.ok) await this.#drop(session);
      return this.#watch(session, response, body);
    }
    if (!header) return jsonRpcError(400, SERVER_ERROR, "Bad Request: Mcp-Session-Id header is required");
    const session = await this.#find(header, owner, request, authInfo);
    if (!session) return jsonRpcError(404, SESSION_NOT_FOUND, "Session not found");
    this.#touch(session);
    const response = await session.transport.handleRequest(request, options);
    return this.#watch(session, response, body);
  }

  /** Ends every live session's streams (the object is being destroyed). */
  async closeAll(): Promise<void> {
    const sessions = [...this.#live.values()];
    this.#live.clear();
    await Promise.all(sessions.map((session) => session.server.close().catch(() => {})));
  }

  /**
   * @param owner - the identity the request is made under; another's session is not found
   * @returns the session, from memory or rebuilt from storage; `undefined` when unknown, expired or another's
   */
  async #find(id: string, owner: string, request: Request, authInfo: AuthInfo | undefined): Promise<LegacySession | undefined> {
    const live = this.#live.get(id);
    if (live) {
      if (live.owner !== owner) return undefined;
      if (this.#expired(live.lastSeen)) {
        await this.#evict(id);
        return undefined;
      }
      return live;
    }
    // Keyed by owner too: a restore another identity asked for answers only that identity.
    const key = `${owner}\n${id}`;
    let opening = this.#opening.get(key);
    if (!opening) {
      opening = this.#restore(id, owner, request, authInfo).finally(() => this.#opening.delete(key));
      this.#opening.set(key, opening);
    }
    const session = await opening;
    return session?.owner === owner ? session : undefined;
  }

  /** @returns whether a session last used at `lastSeen` has been idle longer than the TTL */
  #expired(lastSeen: number): boolean {
    return Date.now() - lastSeen > this.#settings.sessionTtlMs;
  }

  /** Rebuilds a stored session for its owner; another identity's request never builds a server for it. */
  async #restore(id: string, owner: string, request: Request, authInfo: AuthInfo | undefined): Promise<LegacySession | undefined> {
    const stored = this.#store.load(id);
    if (!stored || stored.owner !== owner) return undefined;
    if (this.#expired(stored.lastSeen)) {
      this.#store.delete(id);
      return undefined;
    }
    const params = stored.init;
    const init = JSON.stringify(params);
    const session = await this.#open(id, stored.owner, request, authInfo, init, utf8Length(init));
    for (const uri of stored.subscriptions) session.subscriptions.add(uri);
    session.restoring = true;
    if (session.events) session.events.muted = true;
    try {
      const replay = (message: object, withSession: boolean) =>
        session.transport.handleRequest(
          new Request(request.url, {
            method: "POST",
            headers: {
              accept: "application/json, text/event-stream",
              "content-type": "application/json",
              ...(withSession && { "mcp-session-id": id }),
            },
            body: JSON.stringify(message),
          }),
          { parsedBody: message, authInfo },
        );
      const answer = await replay({ jsonrpc: "2.0", id: RESTORE_ID, method: "initialize", params }, false);
      await answer.text();
      if (!answer.ok) throw new Error(`restoring session ${id} failed with HTTP ${answer.status}`);
      await (await replay({ jsonrpc: "2.0", method: "notifications/initialized" }, true)).text();
    } catch (error) {
      await this.#drop(session);
      throw error;
    } finally {
      session.restoring = false;
      if (session.events) session.events.muted = false;
    }
    this.#touch(session, true);
    return session;
  }

  /** Builds a session around a fresh server and transport, and lists it as live. */
  async #open(
    id: string,
    owner: string,
    request: Request,
    authInfo: AuthInfo | undefined,
    init: string,
    initSize: number,
  ): Promise<LegacySession> {
    const server = await this.#factory(request, id, authInfo);
    const lowLevel = lowLevelOf(server);
    if (lowLevel.transport !== undefined) {
      throw new DokitError<McpErrorCode>(
        "INVALID_ARGUMENT",
        "McpHandler: the server factory returned an instance that is already connected; return a new McpServer every time",
      );
    }
    const { maxEventsPerStream, keepAliveMs, maxRequestBodySize } = this.#settings;
    const events = maxEventsPerStream > 0 ? new SqlEventStore(this.#tables, id, maxEventsPerStream) : undefined;
    let session: LegacySession | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      ...(events && { eventStore: events }),
      keepAliveMs,
      maxRequestBodySize,
      onsessioninitialized: () => {
        if (session && !session.restoring) this.#store.save(session.id, init, session.subscriptions, session.owner);
      },
      onsessionclosed: async () => {
        if (session) await this.#end(session);
      },
    });
    transport.onerror = this.#report;
    session = new LegacySession(id, owner, initSize, server, transport, events);
    this.#answerSubscriptions(session);
    await server.connect(transport);
    transport.onclose = (() => {
      const previous = transport.onclose;
      return () => {
        if (this.#live.get(id) === session) this.#live.delete(id);
        previous?.();
      };
    })();
    this.#live.set(id, session);
    return session;
  }

  /**
   * When the server advertises `resources.subscribe`, dokit answers `resources/subscribe` and
   * `resources/unsubscribe` for the session and keeps the URIs in storage.
   */
  #answerSubscriptions(session: LegacySession): void {
    const lowLevel = session.lowLevel;
    if (!lowLevel.getCapabilities().resources?.subscribe) return;
    lowLevel.setRequestHandler("resources/subscribe", (request) => {
      const uri = request.params.uri;
      if (session.subscriptions.has(uri)) return {};
      const { maxSessionSize } = this.#settings;
      const stored = session.initSize + utf8Length(JSON.stringify([...session.subscriptions, uri]));
      if (stored > maxSessionSize) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Invalid params: the session's initialize params and subscriptions must not exceed ${maxSessionSize} bytes (maxSessionSize)`,
        );
      }
      session.subscriptions.add(uri);
      this.#saveSubscriptions(session);
      return {};
    });
    lowLevel.setRequestHandler("resources/unsubscribe", (request) => {
      session.subscriptions.delete(request.params.uri);
      this.#saveSubscriptions(session);
      return {};
    });
  }

  #saveSubscriptions(session: LegacySession): void {
    this.#store.saveSubscriptions(session.id, session.subscriptions);
  }

  /**
   * Records use of a session; storage is written at most once a minute, or a tenth of
   * the TTL when that is shorter (the stored time decides expiry and eviction order).
   */
  #touch(session: LegacySession, force = false): void {
    const now = Date.now();
    session.lastSeen = now;
    const every = Math.min(TOUCH_EVERY_MS, this.#settings.sessionTtlMs / 10);
    if (!force && now - session.storedSeen < every) return;
    session.storedSeen = now;
    this.#store.touch(session.id, now);
  }

  /**
   * Before a new session: ends the sessions idle longer than the TTL, then the least
   * recently used until one more fits under `maxSessions`.
   */
  async #makeRoom(): Promise<void> {
    const { sessionTtlMs, maxSessions } = this.#settings;
    for (const session of this.#live.values()) {
      // Storage lags use by up to a minute: record it, so a session in use is not taken for idle.
      if (session.lastSeen > session.storedSeen) this.#touch(session, true);
    }
    const gone = [...this.#store.unusedSince(Date.now() - sessionTtlMs), ...this.#store.overCap(maxSessions, 1)];
    await Promise.all([...new Set(gone)].map((id) => this.#evict(id)));
  }

  /** Ends a session for good: its row and events are deleted, its streams closed; its id is then unknown. */
  async #evict(id: string): Promise<void> {
    this.#store.delete(id);
    const session = this.#live.get(id);
    if (!session) return;
    this.#live.delete(id);
    await session.server.close().catch(() => {});
  }

  /** DELETE: forgets the session everywhere. */
  async #end(session: LegacySession): Promise<void> {
    this.#live.delete(session.id);
    this.#store.delete(session.id);
    // The transport closes itself after this callback; the server goes with it.
    queueMicrotask(() => void session.server.close().catch(() => {}));
  }

  /** Drops a session that never became usable (failed initialize or restore). */
  async #drop(session: LegacySession): Promise<void> {
    if (this.#live.get(session.id) === session) this.#live.delete(session.id);
    await session.server.close().catch(() => {});
  }

  /** Clears a response stream's events once its SSE body completed with every response it owed. */
  #watch(session: LegacySession, response: Response, body: { messages: RawMessage[] } | undefined): Response {
    const events = session.events;
    if (!events) return response;
    const owed = body ? body.messages.filter(isRequest).length : 1;
    return watchStream(response, ({ streams, responses }) => {
      if (responses < owed) return;
      for (const stream of streams) {
        if (stream !== STANDALONE_STREAM) events.clearStream(stream);
      }
    });
  }
}

/** The SDK transport's stream id for the standalone GET stream (kept for the session's life, bounded). */
const STANDALONE_STREAM = "_GET_stream";
