import type { AuthInfo, McpServer, PerRequestResponseMode, Server } from "@modelcontextprotocol/server";
import type { McpCorsOptions } from "./guard";
import type { SessionOwner } from "./owner";

/** What the server factory is told about the request or session it serves. */
export interface McpServerContext<Host = unknown> {
  /** `modern` for 2026-07-28 requests (one instance per request), `legacy` for a 2025-era session. */
  era: "modern" | "legacy";
  /** The Durable Object the handler is installed on. */
  host: Host;
  /** Props the Worker passed through `routeAgentRequest` (auth, user), if any. */
  props: Record<string, unknown> | undefined;
  /** The HTTP request that made the instance necessary. */
  request: Request;
  /** The 2025-era session the instance serves (legacy only). */
  sessionId?: string;
  /** What `authInfo` mapped the props to, if configured. */
  authInfo?: AuthInfo;
}

/**
 * Builds a fresh `McpServer` (or low-level `Server`) from `@modelcontextprotocol/server`.
 * Called once per modern request and once per legacy session (again after a wake):
 * never return an instance you have returned before.
 */
export type McpServerFactory<Host = unknown> = (context: McpServerContext<Host>) => McpServer | Server | Promise<McpServer | Server>;

/** How 2025-era (`initialize` + `Mcp-Session-Id`) clients are served. */
export type LegacyMode =
  /** Sessions kept in the object's storage: they survive eviction, stream, resume and accept server-to-client requests (default). */
  | "sessions"
  /** The SDK's stateless fallback: one instance per POST, no GET/DELETE, no server-to-client requests. */
  | "stateless"
  /** Refused with the SDK's unsupported-protocol-version error. */
  | "reject";

/** Options of {@link McpHandler}. */
export interface McpHandlerOptions<Host = unknown> {
  /** Returns a fresh server for each modern request and each legacy session. */
  server: McpServerFactory<Host>;
  /** The path below the object's base that the handler claims, with everything under it (default `/mcp`). */
  route?: string;
  /** How 2025-era clients are served (default `"sessions"`). */
  legacy?: LegacyMode;
  /**
   * Hostnames (no scheme, no port) browser pages may call from, checked against `Origin`, or `"*"` for any.
   * Localhost names and the `allowedHosts` are always allowed, so the default is localhost pages only;
   * requests without `Origin` (non-browser clients) pass. A page on another site: `allowedOrigins: ["app.example.com"]`.
   */
  allowedOrigins?: readonly string[] | "*";
  /**
   * Hostnames the `Host` header may name besides localhost, or `"*"` for any. Once listed, `Host` is checked on
   * every request and the listed hostnames' own pages may call (`Origin`). Default: `Host` is not checked (a
   * rebound page is refused by its `Origin`). A same-origin app: `allowedHosts: ["myapp.example.com"]`.
   */
  allowedHosts?: readonly string[] | "*";
  /** CORS headers for allowed browser origins, or `false` for none (default: on, reflecting the allowed `Origin`). */
  cors?: McpCorsOptions | false;
  /** Largest POST body in bytes; a larger one is answered 413 (default 4 MiB). */
  maxRequestBodySize?: number;
  /**
   * Interval of SSE `: keepalive` comments on open streams, in ms; 0 disables (default 25 000).
   * An open stream keeps the object in memory (it cannot hibernate while a stream is open).
   */
  keepAliveMs?: number;
  /**
   * The SSE `retry:` field, in ms, sent as the first frame of every SSE stream on both lanes:
   * how long a client waits before reconnecting (with `Last-Event-ID` on 2025-era sessions)
   * after a stream ends early. A non-negative integer, or `false` to send none (default 1000).
   */
  retryMs?: number | false;
  /** Response shaping for modern requests (the SDK's `responseMode`, default `auto`). */
  responseMode?: PerRequestResponseMode;
  /** Events kept per stream for `Last-Event-ID` resumption; 0 turns resumability off (default 500). */
  maxEventsPerStream?: number;
  /**
   * A 2025-era session unused this long (ms) expires: its id is then unknown (404) and its row and
   * events are deleted, checked when it is next used and when a new session starts (default 24 hours).
   */
  sessionTtlMs?: number;
  /**
   * The most 2025-era sessions one object keeps; a new session first ends the least recently used
   * one beyond it (default 1000).
   */
  maxSessions?: number;
  /**
   * Bytes one 2025-era session may store: its `initialize` params plus its resource subscriptions, as JSON.
   * An `initialize` over it is refused with JSON-RPC -32602 and no session; so is a `resources/subscribe`
   * that would pass it (default 65 536).
   */
  maxSessionSize?: number;
  /**
   * The identity a request is made under: a 2025-era session serves only requests with the identity it
   * was created under, others get 404 as for an unknown session. Default: SHA-256 of the routed props
   * (stable JSON), or `""` without props. Return a stable user id when props carry per-request values.
   */
  sessionOwner?: SessionOwner;
  /** Maps the routed props to the SDK's `AuthInfo` (seen by handlers as `ctx.http.authInfo`). */
  authInfo?: (props: Record<string, unknown> | undefined, request: Request) => AuthInfo | undefined;
  /** Receives protocol errors and refused requests (default: logged with `console.warn`). */
  onError?: (error: Error) => void;
}

/** Option defaults. */
export const DEFAULTS = {
  route: "/mcp",
  legacy: "sessions",
  maxRequestBodySize: 4 * 1024 * 1024,
  keepAliveMs: 25_000,
  retryMs: 1000,
  maxEventsPerStream: 500,
  sessionTtlMs: 24 * 60 * 60 * 1000,
  maxSessions: 1000,
  maxSessionSize: 64 * 1024,
} as const;

export type { McpCorsOptions, SessionOwner };
