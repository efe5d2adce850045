import {
  type AuthInfo,
  type McpServer,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { DokitError } from "../lifecycle/errors";
import { SqlEventStore } from "./event-store";
import { INVALID_REQUEST, isRequest, jsonRpcError, type RawMessage, SERVER_ERROR, SESSION_NOT_FOUND } from "./jsonrpc";
import { lowLevelOf } from "./server-shape";
import { watchStream } from "./stream-watch";
import { SessionStore } from "./session-store";
import type { Tables } from "./tables";

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

/** Builds a server for a session (the capability's factory, with the host and props filled in). */
export type SessionServerFactory = (request: Request, sessionId: string, authInfo: AuthInfo | undefined) => Promise<McpServer | Server>;

/** Settings of the legacy lane. */
export interface SessionSettings {
  keepAliveMs: number;
  maxRequestBodySize: number;
  maxEventsPerStream: number;
  sessionTtlMs: number;
}

/** One live 2025-era session. */
export class LegacySession {
  /** Resource URIs the client subscribed to with `resources/subscribe`. */
  readonly subscriptions = new Set<string>();
  /** True while the session is being rebuilt from storage. */
  restoring = false;
  lastSeen = Date.now();

  constructor(
    /** The session id (`Mcp-Session-Id`). */
    readonly id: string,
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
  async handle(request: Request, body: { body: unknown; messages: RawMessage[] } | undefined, authInfo: AuthInfo | undefined): Promise<Response> {
    const header = request.headers.get("mcp-session-id");
    const initialize = body?.messages.find((message) => message.method === "initialize" && isRequest(message));
    const options = { authInfo, ...(body && { parsedBody: body.body }) };
    if (initialize) {
      if (header) return jsonRpcError(400, INVALID_REQUEST, "Invalid Request: an initialize request must not carry Mcp-Session-Id");
      this.#sweep();
      const session = await this.#open(crypto.randomUUID(), request, authInfo, initialize.params);
      const response = await session.transport.handleRequest(request, options);
      if (!response.ok) await this.#drop(session);
      return this.#watch(session, response, body);
    }
    if (!header) return jsonRpcError(400, SERVER_ERROR, "Bad Request: Mcp-Session-Id header is required");
    const session = await this.#find(header, request, authInfo);
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

  /** @returns the session, from memory or rebuilt from storage; `undefined` when unknown */
  #find(id: string, request: Request, authInfo: AuthInfo | undefined): Promise<LegacySession | undefined> {
    const live = this.#live.get(id);
    if (live) return Promise.resolve(live);
    let opening = this.#opening.get(id);
    if (!opening) {
      opening = this.#restore(id, request, authInfo).finally(() => this.#opening.delete(id));
      this.#opening.set(id, opening);
    }
    return opening;
  }

  async #restore(id: string, request: Request, authInfo: AuthInfo | undefined): Promise<LegacySession | undefined> {
    const stored = this.#store.load(id);
    if (!stored) return undefined;
    const params = stored.init;
    const session = await this.#open(id, request, authInfo, params);
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
  async #open(id: string, request: Request, authInfo: AuthInfo | undefined, initParams: unknown): Promise<LegacySession> {
    const server = await this.#factory(request, id, authInfo);
    const lowLevel = lowLevelOf(server);
    if (lowLevel.transport !== undefined) {
      throw new DokitError(
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
        if (session && !session.restoring) this.#save(session, initParams);
      },
      onsessionclosed: async () => {
        if (session) await this.#end(session);
      },
    });
    transport.onerror = this.#report;
    session = new LegacySession(id, server, transport, events);
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
      session.subscriptions.add(request.params.uri);
      this.#saveSubscriptions(session);
      return {};
    });
    lowLevel.setRequestHandler("resources/unsubscribe", (request) => {
      session.subscriptions.delete(request.params.uri);
      this.#saveSubscriptions(session);
      return {};
    });
  }

  #save(session: LegacySession, initParams: unknown): void {
    this.#store.save(session.id, initParams, session.subscriptions);
  }

  #saveSubscriptions(session: LegacySession): void {
    this.#store.saveSubscriptions(session.id, session.subscriptions);
  }

  /** Records use of a session, at most once a minute (it decides when an idle session expires). */
  #touch(session: LegacySession, force = false): void {
    const now = Date.now();
    if (!force && now - session.lastSeen < TOUCH_EVERY_MS) return;
    session.lastSeen = now;
    this.#store.touch(session.id, now);
  }

  /** Deletes sessions unused for longer than the TTL, with their events. */
  #sweep(): void {
    this.#store.deleteUnusedSince(Date.now() - this.#settings.sessionTtlMs, (id) => this.#live.has(id));
  }

  /** DELETE: forgets the session everywhere. */
  async #end(session: LegacySession): Promise<void> {
    this.#live.delete(session.id);
    this.#store.delete(session.id);
    session.events?.clear();
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
