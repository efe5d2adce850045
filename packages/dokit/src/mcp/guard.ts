import {
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from "@modelcontextprotocol/server";

// Origin and Host validation (DNS rebinding and cross-site request forgery)
// and CORS. The checks are the SDK's own helpers; dokit only chooses the
// allowlists. Hostnames only, port-agnostic, as the SDK's helpers expect.
//
// The allowlists never come from the request itself: on workerd the request
// URL is built from the `Host` header, so a rebound page (`Host` and `Origin`
// both naming the attacker's hostname) would otherwise allow itself.
//
// The rule:
// - localhost names (`localhost`, `127.0.0.1`, `[::1]`) are always allowed;
// - `Origin`, when present, must name localhost or a hostname listed in
//   `allowedOrigins` or `allowedHosts` (a listed host's own pages are same-origin);
// - `Host` is checked only when `allowedHosts` lists hostnames; then every
//   request's `Host` must be localhost or listed.
// A rebound page always sends `Origin` on the POST every MCP exchange starts
// with, so the `Origin` check alone stops it; requests without `Origin` come
// from non-browser clients, which must keep working on a deployed hostname the
// object cannot know. A deployed Worker is reached only through hostnames
// routed to it, so a foreign `Host` there is no rebinding risk.

/** CORS headers McpHandler sends; every field is optional. */
export interface McpCorsOptions {
  /** `Access-Control-Allow-Methods` (default `GET, POST, DELETE, OPTIONS`). */
  methods?: string;
  /** `Access-Control-Allow-Headers` (default: the headers the preflight asks for). */
  headers?: string;
  /** `Access-Control-Expose-Headers` (default `Mcp-Session-Id, Mcp-Protocol-Version`). */
  exposeHeaders?: string;
  /** `Access-Control-Max-Age` in seconds (default 86400). */
  maxAge?: number;
  /** Send `Access-Control-Allow-Credentials: true` (default false). */
  credentials?: boolean;
}

/** The allowlists and CORS settings of one McpHandler. */
export interface GuardOptions {
  /** Hostnames browser pages may call from (`Origin`) besides localhost and `allowedHosts`, or `"*"` for any. */
  allowedOrigins?: readonly string[] | "*";
  /** Hostnames `Host` may name besides localhost (checked on every request once listed), or `"*"` for any. */
  allowedHosts?: readonly string[] | "*";
  /** CORS settings, or `false` to send no CORS headers and refuse preflights. */
  cors?: McpCorsOptions | false;
}

const DEFAULT_EXPOSE = "Mcp-Session-Id, Mcp-Protocol-Version";
const DEFAULT_METHODS = "GET, POST, DELETE, OPTIONS";

/** @returns the listed hostnames, or none for an absent list or `"*"` */
function listed(hostnames: readonly string[] | "*" | undefined): readonly string[] {
  return Array.isArray(hostnames) ? hostnames : [];
}

/**
 * Validates `Host` and `Origin`.
 * @returns a 403 JSON-RPC error response, or `undefined` when the request may proceed
 */
export function rejectForeign(request: Request, options: GuardOptions): Response | undefined {
  const { allowedHosts, allowedOrigins } = options;
  // A request without Host cannot come from a browser (browsers always send it); the
  // DNS-rebinding check is about browsers, so only a present Host is checked.
  if (Array.isArray(allowedHosts) && request.headers.has("host")) {
    const rejected = hostHeaderValidationResponse(request, [...localhostAllowedHostnames(), ...allowedHosts]);
    if (rejected) return rejected;
  }
  if (allowedOrigins !== "*") {
    const origins = [...localhostAllowedOrigins(), ...listed(allowedOrigins), ...listed(allowedHosts)];
    const rejected = originValidationResponse(request, origins);
    if (rejected) return rejected;
  }
  return undefined;
}

/**
 * Answers a CORS preflight (`OPTIONS`) for a request that passed {@link rejectForeign}.
 * @returns 204 with the CORS headers, or 405 when CORS is off
 */
export function preflight(request: Request, cors: McpCorsOptions | false | undefined): Response {
  if (cors === false) return new Response(null, { status: 405, headers: { Allow: "GET, POST, DELETE" } });
  const headers = new Headers();
  setAllowOrigin(headers, request, cors);
  headers.set("Access-Control-Allow-Methods", cors?.methods ?? DEFAULT_METHODS);
  const asked = request.headers.get("access-control-request-headers");
  const allowHeaders = cors?.headers ?? asked;
  if (allowHeaders) headers.set("Access-Control-Allow-Headers", allowHeaders);
  headers.set("Access-Control-Max-Age", String(cors?.maxAge ?? 86400));
  return new Response(null, { status: 204, headers });
}

/**
 * Adds CORS headers to a response for a request that carries `Origin` (it already passed validation).
 * @returns the response, with the headers when they apply
 */
export function withCors(response: Response, request: Request, cors: McpCorsOptions | false | undefined): Response {
  if (cors === false || !request.headers.has("origin")) return response;
  const copy = new Response(response.body, response);
  setAllowOrigin(copy.headers, request, cors);
  copy.headers.set("Access-Control-Expose-Headers", cors?.exposeHeaders ?? DEFAULT_EXPOSE);
  return copy;
}

function setAllowOrigin(headers: Headers, request: Request, cors: McpCorsOptions | undefined): void {
  const origin = request.headers.get("origin");
  if (origin === null) return;
  // The Origin already passed the allowlist, so reflecting it allows exactly the allowed origins.
  headers.set("Access-Control-Allow-Origin", origin);
  headers.append("Vary", "Origin");
  if (cors?.credentials) headers.set("Access-Control-Allow-Credentials", "true");
}
