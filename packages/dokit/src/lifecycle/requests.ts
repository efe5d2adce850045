// What the lifecycle reads of a request: whether it asks for an upgrade, and
// its path in the form routes are claimed and looked up in.

/** @returns whether `request` asks for a WebSocket upgrade */
export function isUpgrade(request: Request): boolean {
  return request.headers.get("Upgrade")?.toLowerCase() === "websocket";
}

/** @returns `path` without a trailing slash (except the root `/`), the form routes are claimed and looked up in */
export function normalizeRoute(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}
