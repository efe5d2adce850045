// Whose a 2025-era session is. A session remembers the identity it was
// created under and serves only requests made under the same one; by default
// the identity is a digest of the props the Worker routed with (its own auth:
// `routeAgentRequest(request, env, { props })`), so a session id that leaks to
// another user is answered as an unknown session.

/** Returns the identity a request is made under; requests with the same identity share sessions. */
export type SessionOwner = (props: Record<string, unknown> | undefined, request: Request) => string | undefined | Promise<string | undefined>;

/** @returns JSON of `value` with object keys sorted at every depth, so equal props give equal text */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== "object" || Array.isArray(inner)) return inner;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(inner).sort()) sorted[key] = (inner as Record<string, unknown>)[key];
    return sorted;
  });
}

/**
 * The default identity: SHA-256 (hex) of the props' stable JSON; `""` without props (anonymous).
 * @returns the digest, never the props themselves (they may hold tokens)
 */
export async function digestOfProps(props: Record<string, unknown> | undefined): Promise<string> {
  if (props === undefined) return "";
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(stableJson(props)));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
