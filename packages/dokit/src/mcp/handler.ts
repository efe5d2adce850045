import {
  type AuthInfo,
  createMcpHandler,
  InMemoryServerEventBus,
  isJsonContentType,
  isLegacyRequest,
  type McpHttpHandler,
  type McpServer,
  type Server,
} from "@modelcontextprotocol/server";
import type { Capability, Claims } from "../lifecycle/capability";
import { getCurrentAgent } from "../lifecycle/current";
import { DokitError } from "../lifecycle/errors";
import { preflight, rejectForeign, withCors } from "./guard";
import { checkBody, INTERNAL_ERROR, jsonRpcError, type RawMessage, readBody, SERVER_ERROR } from "./jsonrpc";
import { McpNotifier } from "./notify";
import { DEFAULTS, type McpHandlerOptions, type McpServerContext } from "./options";
import { digestOfProps } from "./owner";
import { forSdk } from "./server-shape";
import { LegacySessions } from "./sessions";
import { withRetryField } from "./sse-retry";
import { Tables } from "./tables";
import type { McpErrorCode } from "./errors";

/**
 * An MCP server inside the Durable Object: claims HTTP requests on its route
 * (default `/mcp`) and serves both protocol generations from a factory that
 * returns a fresh `McpServer` per request (2026-07-28) or per session (2025-era).
 *
 * ```ts
 * readonly mcp = new McpHandler<Counter>({ server: () => this.buildServer() });
 * readonly lifecycle = Lifecycle.install(this).use(this.mcp);
 * ```
 */
export class McpHandler<Host = unknown> implements Capability {
  readonly capabilityName = "McpHandler";
  /** Change notifications for every connected client (listen streams and 2025-era sessions). */
  readonly notify: McpNotifier;
  readonly #options: McpHandlerOptions<Host>;
  readonly #settings: {
    route: string;
    legacy: NonNullable<McpHandlerOptions["legacy"]>;
    maxRequestBodySize: number;
    keepAliveMs: number;
    retryMs: number | false;
    maxEventsPerStream: number;
    sessionTtlMs: number;
    maxSessions: number;
    maxSessionSize: number;
  };
  readonly #bus: InMemoryServerEventBus;
  readonly #report: (error: Error) => void;
  #claims: Claims | undefined;
  #tables: Tables | undefined;
  #modern: McpHttpHandler | undefined;
  #sessions: LegacySessions | undefined;

  /** @param options - the server factory, route, security and streaming settings */
  constructor(options: McpHandlerOptions<Host>) {
    if (typeof options?.server !== "function") {
      throw new DokitError<McpErrorCode>("INVALID_ARGUMENT", "McpHandler needs { server: (ctx) => new McpServer(...) }, a factory returning a fresh server");
    }
    const size = options.maxRequestBodySize ?? DEFAULTS.maxRequestBodySize;
    if (!(size > 0)) throw new DokitError<McpErrorCode>("INVALID_ARGUMENT", "McpHandler: maxRequestBodySize must be a positive number of bytes");
    const retryMs = options.retryMs ?? DEFAULTS.retryMs;
    if (retryMs !== false && !(Number.isSafeInteger(retryMs) && retryMs >= 0)) {
      throw new DokitError<McpErrorCode>("INVALID_ARGUMENT", "McpHandler: retryMs must be a non-negative integer of milliseconds, or false");
    }
    const positive = (name: "sessionTtlMs" | "maxSessions" | "maxSessionSize") => {
      const value = options[name] ?? DEFAULTS[name];
      if (!(Number.isSafeInteger(value) && value > 0)) throw new DokitError<McpErrorCode>("INVALID_ARGUMENT", `McpHandler: ${name} must be a positive integer`);
      return value;
    };
    this.#options = options;
    this.#settings = {
      route: options.route ?? DEFAULTS.route,
      legacy: options.legacy ?? DEFAULTS.legacy,
      maxRequestBodySize: size,
      keepAliveMs: options.keepAliveMs ?? DEFAULTS.keepAliveMs,
      retryMs,
      maxEventsPerStream: options.maxEventsPerStream ?? DEFAULTS.maxEventsPerStream,
      sessionTtlMs: positive("sessionTtlMs"),
      maxSessions: positive("maxSessions"),
      maxSessionSize: positive("maxSessionSize"),
    };
    const onError = options.onError;
    this.#report = (error) => {
      try {
        if (onError) onError(error);
        else console.warn(`dokit: mcp: ${error.message}`);
      } catch {
        // a throwing reporter must not break serving
      }
    };
    this.#bus = new InMemoryServerEventBus(this.#report);
    this.notify = new McpNotifier(this.#bus, () => this.#sessions?.live ?? [], this.#report);
  }

  /** @internal Claims the route and the destroy hook. */
  attach(claims: Claims): void {
    this.#claims = claims;
    claims.route(this.#settings.route, (request) => this.fetch(request));
    claims.onDestroy(async () => {
      await this.#modern?.close();
      await this.#sessions?.closeAll();
      this.#modern = undefined;
      this.#sessions = undefined;
      this.#tables?.reset();
    });
  }

  /**
   * The 2025-era sessions this instance holds in memory (after a wake, a stored
   * session is rebuilt on its next request). 2026-07-28 traffic has no sessions.
   * @returns each session's id, when it was last used, and its resource subscriptions
   */
  sessions(): { id: string; lastSeen: number; subscriptions: string[] }[] {
    return [...(this.#sessions?.live ?? [])].map((session) => ({
      id: session.id,
      lastSeen: session.lastSeen,
      subscriptions: [...session.subscriptions],
    }));
  }

  /**
   * Serves one HTTP request on the MCP route (the lifecycle calls it; a host may too).
   * @returns the MCP response; errors become JSON-RPC error bodies without stack traces
   */
  async fetch(request: Request): Promise<Response> {
    const claims = this.#claims;
    const observer = claims?.dispatch.observer;
    const began = observer?.since("mcp");
    if (!claims || !observer || !began) return this.#serve(request);
    // Someone listens on agents:mcp: note what the request was, then publish mcp:request.
    const note: McpNote = { era: "none" };
    const response = await this.#serve(request, note);
    const first = note.messages?.[0];
    const method = typeof first?.method === "string" ? first.method : request.method;
    // SAFETY: checkBody let only structured (object) params through; `name` is checked below.
    const params = first?.params as { name?: unknown } | undefined;
    const sessionId = request.headers.get("mcp-session-id") ?? response.headers.get("mcp-session-id");
    observer.emit("mcp", claims.lifecycle, "mcp:request", {
      era: note.era,
      method,
      ...(method === "tools/call" && typeof params?.name === "string" && { tool: params.name }),
      messages: note.messages?.length ?? 0,
      status: response.status,
      durationMs: Date.now() - began,
      ...(sessionId !== null && { sessionId }),
    });
    return response;
  }

  async #serve(request: Request, note?: McpNote): Promise<Response> {
    const cors = this.#options.cors;
    try {
      const foreign = rejectForeign(request, this.#options);
      if (foreign) return foreign;
      // OPTIONS: a CORS preflight
      if (request.method === "OPTIONS") return preflight(request, cors);
      const response = await this.#dispatch(request, note);
      const { retryMs } = this.#settings;
      return withCors(retryMs === false ? response : withRetryField(response, retryMs), request, cors);
    } catch (error) {
      console.error(`dokit: mcp: ${request.method} ${new URL(request.url).pathname} failed`, error);
      return withCors(jsonRpcError(500, INTERNAL_ERROR, "Internal error"), request, cors);
    }
  }

  async #dispatch(request: Request, note?: McpNote): Promise<Response> {
    const { maxRequestBodySize, legacy } = this.#settings;
    const authInfo = this.#options.authInfo?.(getCurrentAgent().props, request);
    let checked: { body: unknown; messages: RawMessage[] } | undefined;
    if (request.method === "POST") {
      if (!isJsonContentType(request.headers.get("content-type"))) {
        return jsonRpcError(415, SERVER_ERROR, "Unsupported Media Type: Content-Type must be application/json");
      }
      const text = await readBody(request, maxRequestBodySize);
      if (text === undefined) {
        return jsonRpcError(413, SERVER_ERROR, `Payload Too Large: the body must not exceed ${maxRequestBodySize} bytes`);
      }
      const check = checkBody(text);
      if (!check.ok) return check.response;
      checked = check;
      if (note) note.messages = check.messages;
    }
    // 2025-era traffic (initialize, Mcp-Session-Id, GET streams, DELETE): the session lane
    if (legacy === "sessions" && (await isLegacyRequest(request, checked?.body, { maxRequestBodySize }))) {
      if (note) note.era = "legacy";
      const props = getCurrentAgent().props;
      const owner = (await (this.#options.sessionOwner ?? digestOfProps)(props, request)) ?? "";
      return this.#legacy().handle(request, checked, authInfo, owner);
    }
    if (note) note.era = "modern";
    // 2026-07-28 traffic (per-request envelope, subscriptions/listen): the SDK's own handler
    return this.#modernHandler().fetch(request, {
      ...(authInfo && { authInfo }),
      ...(checked && { parsedBody: checked.body }),
    });
  }

  /** Calls the user's factory with the host, the routed props and the request. */
  async #build(era: "modern" | "legacy", request: Request, authInfo: AuthInfo | undefined, sessionId?: string): Promise<McpServer | Server> {
    const claims = this.#claims;
    if (!claims) throw new DokitError<McpErrorCode>("NOT_INSTALLED", "McpHandler is not installed: use Lifecycle.install(this).use(mcpHandler)");
    const context: McpServerContext<Host> = {
      era,
      // SAFETY: the host type parameter names the object the handler was installed on.
      host: claims.lifecycle.host as Host,
      props: getCurrentAgent().props,
      request,
      ...(sessionId !== undefined && { sessionId }),
      ...(authInfo && { authInfo }),
    };
    return this.#options.server(context);
  }

  #modernHandler(): McpHttpHandler {
    if (this.#modern) return this.#modern;
    const { legacy, keepAliveMs, maxRequestBodySize } = this.#settings;
    const responseMode = this.#options.responseMode;
    this.#modern = createMcpHandler(
      async (ctx) => forSdk(await this.#build(ctx.era, ctx.requestInfo ?? currentRequest(), ctx.authInfo)),
      {
        // With sessions, 2025-era traffic never reaches this handler.
        legacy: legacy === "stateless" ? "stateless" : "reject",
        bus: this.#bus,
        keepAliveMs,
        maxRequestBodySize,
        onerror: this.#report,
        ...(responseMode && { responseMode }),
      },
    );
    return this.#modern;
  }

  #legacy(): LegacySessions {
    if (this.#sessions) return this.#sessions;
    const claims = this.#claims;
    if (!claims) throw new DokitError<McpErrorCode>("NOT_INSTALLED", "McpHandler is not installed: use Lifecycle.install(this).use(mcpHandler)");
    this.#tables ??= new Tables(claims.lifecycle.ctx.storage);
    this.#sessions = new LegacySessions(
      this.#tables,
      this.#settings,
      (request, sessionId, authInfo) => this.#build("legacy", request, authInfo, sessionId),
      this.#report,
    );
    return this.#sessions;
  }
}

/** What an `mcp:request` event reports of a request, noted while it is served. */
type McpNote = { era: "modern" | "legacy" | "none"; messages?: RawMessage[] };

function currentRequest(): Request {
  const request = getCurrentAgent().request;
  if (!request) throw new DokitError<McpErrorCode>("NO_REQUEST", "McpHandler: no request in scope");
  return request;
}
