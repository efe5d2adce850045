// What McpClients learns from whoever called it: the current request, or the
// connection whose message is being handled (getCurrentAgent()).

import type { Dispatch } from "../lifecycle/capability";
import { isCrossSite } from "../origin/cross-site";
import { getCurrentAgent } from "../lifecycle/current";
import { BASE_HEADER } from "../lifecycle/headers";
import { isLoopbackHost } from "./url-policy";

/**
 * @returns whether the caller is in local development: the request, or the calling connection's upgrade,
 *   was addressed to a loopback host and did not come from a page on another site (a page anywhere may
 *   open a WebSocket to localhost; its Origin says so)
 * @param dispatch - the table that knows where a connection's upgrade came from
 */
export function callerIsLocal(dispatch: Dispatch | undefined): boolean {
  const { request, connection } = getCurrentAgent();
  if (request) return !isCrossSite(request.url, request.headers.get("origin"), request.headers.get("sec-fetch-site")) && isLoopbackUrl(request.url);
  if (!connection?.uri) return false;
  const context = dispatch?.connectionContext(connection);
  return context !== undefined && !isCrossSite(connection.uri, context.origin, undefined) && isLoopbackUrl(connection.uri);
}

/**
 * @returns the OAuth redirect URL at `callbackPath` below the object's address as the caller reached it,
 *   or `null` when none can be known
 */
export function callerCallbackUrl(callbackPath: string): string | null {
  const { request, connection } = getCurrentAgent();
  try {
    if (request) {
      const base = request.headers.get(BASE_HEADER);
      if (base !== null) return new URL(base + callbackPath, request.url).href;
    }
    // A call over a WebSocket: the upgrade URL is the object's address (without a sub-path).
    if (connection?.uri) {
      const uri = new URL(connection.uri);
      return new URL(uri.pathname.replace(/\/$/, "") + callbackPath, uri).href;
    }
  } catch {
    // fall through
  }
  return null;
}

/** @returns whether `address` is a URL whose host is loopback */
function isLoopbackUrl(address: string): boolean {
  try {
    return isLoopbackHost(new URL(address).hostname);
  } catch {
    return false;
  }
}
