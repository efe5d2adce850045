// Headers the router sets on the request it forwards to the object (Worker →
// Durable Object only). The router always overwrites or removes them, so a
// client cannot supply its own.

/** JSON of the props the Worker passed to `routeAgentRequest`. */
export const PROPS_HEADER = "x-dokit-props";
/** The path prefix that addressed the object (`/agents/counter/room-1`). */
export const BASE_HEADER = "x-dokit-base";

/** @returns the props the router attached, or `undefined` */
export function readProps(request: Request): Record<string, unknown> | undefined {
  const raw = request.headers.get(PROPS_HEADER);
  if (raw === null) return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    // SAFETY: the router only ever writes a JSON object here.
    return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** @returns the request's path below the object's base path (`/mcp`), or its whole path */
export function subPath(request: Request): string {
  const path = new URL(request.url).pathname;
  const base = request.headers.get(BASE_HEADER);
  if (base === null || !path.startsWith(base)) return path;
  const rest = path.slice(base.length);
  return rest === "" ? "/" : rest;
}
