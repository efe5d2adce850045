// Who may see the Inspector. Two checks, both needed:
//
// - `authorize(request)` (default: local development) decides whether the
//   requester may look at all. On workerd the request URL is built from the
//   `Host` header, so the default is the same rule `dokit/mcp` applies to
//   `Host`: only `localhost`, `127.0.0.1` and `[::1]` pass. A DNS-rebound page
//   (an attacker's hostname resolving to 127.0.0.1) sends its own hostname as
//   `Host`, so it fails; a deployed Worker is reached under the hostnames routed
//   to it, never a loopback name.
// - The request must not come from another site, whatever `authorize` says:
//   a page elsewhere may make a logged-in developer's browser open the feed
//   socket (WebSocket upgrades ignore CORS) or load the page in a frame. So an
//   `Origin` must equal the request's own origin, and `Sec-Fetch-Site` (sent by
//   browsers on fetches and navigations) must be `same-origin` or `none` (the
//   rule in origin/cross-site.ts, which McpClients applies too).

import { isCrossSite as crossSite } from "../origin/cross-site";

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * The default `authorize`: local development only.
 * @returns whether the request's host is `localhost`, `127.0.0.1` or `[::1]` (any port)
 */
export function isLocalDevelopment(request: Request): boolean {
  return LOOPBACK.has(new URL(request.url).hostname);
}

/** @returns whether the request carries a browser's sign that another site made it */
export function isCrossSite(request: Request): boolean {
  return crossSite(request.url, request.headers.get("origin"), request.headers.get("sec-fetch-site"));
}
