// Whether a request came from a page on another site. Browsers let any page open
// a WebSocket to any host (localhost included), and say where the page is in the
// `Origin` header, and in `Sec-Fetch-Site` when they send it. Only the request's own
// origin counts as the same site (the Inspector's guard and McpClients apply this rule).

/**
 * @param url - the request's URL (for a WebSocket, its upgrade's)
 * @param origin - its `Origin` header, if any
 * @param fetchSite - its `Sec-Fetch-Site` header, if any
 * @returns whether a page elsewhere made the request: an `Origin` other than the request's own origin
 *   (an opaque `null` one included), or a `Sec-Fetch-Site` other than `same-origin` or `none`. Without
 *   either header (a server, a CLI) it did not.
 */
export function isCrossSite(url: string, origin: string | null | undefined, fetchSite: string | null | undefined): boolean {
  if (fetchSite != null && fetchSite !== "same-origin" && fetchSite !== "none") return true;
  if (origin == null) return false;
  try {
    return origin !== new URL(url).origin;
  } catch {
    return true;
  }
}
