import {
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from "@modelcontextprotocol/server";

// Origin and Host validation (DNS rebinding and cross-site request forgery)
// and CORS. The checks are the SDK's own helpers; dokit only chooses the
// allowlists. Hostnames only, port-agnostic, as the SDK's helpers expect.

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
  /** Hostnames a browser page may call from (`Origin`), or `"*"` for any. Requests without `Origin` always pass. */
  allowedOrigins?: readonly string[] | "*";
  /** Hostnames the `Host` header may name, or `"*"` for any. */
  allowedHosts?: readonly string[] | "*";
  /** CORS settings, or `false` to send no CORS headers and refuse preflights. */
  cors?: McpCorsOptions | false;
}

const DEFAULT_EXPOSE = "Mcp-Session-Id, Mcp-Protocol-Version";
const DEFAULT_METHODS = "GET, POST, DELETE, OPTIONS";

/** @returns the hostnames allowed for `request` when the host configured none: its own URL host plus localhost */
function defaults(request: Request, localhost: string[]): string[] {
  // URL#hostname keeps IPv6 brackets, the form the SDK's allowlists use.
  return [new URL(request.url).hostname, ...localhost];
}

/**
 * Validates `Host` and `Origin`.
 * @returns a 403 JSON-RPC error response, or `undefined` when the request may proceed
 */
export function rejectForeign(request: Request, options: GuardOptions): Response | undefined {
  const { allowedHosts, allowedOrigins } = options;
  // A request without Host cannot come from a browser (browsers always send it); the
  // DNS-rebinding check is about browsers, so only a present Host is checked.
  if (allowedHosts !== "*" && request.headers.has("host")) {
    const hosts = allowedHosts ? [...allowedHosts] : defaults(request, localhostAllowedHostnames());
    const rejected = hostHeaderValidationResponse(request, hosts);
    if (rejected) return rejected;
  }
  if (allowedOrigins !== "*") {
    const origins = allowedOrigins ? [...allowedOrigins] : defaults(request, localhostAllowedOrigins());
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
