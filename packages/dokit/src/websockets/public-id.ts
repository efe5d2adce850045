// A connection's public id: what dokit shows other clients in place of the connection id (`_pk`).
// The connection id is a bearer secret (whoever knows it can connect with it and replace the
// connection), so what others see is derived from it by a one-way function: SHA-256 of the id
// (after a dokit-specific prefix), its first 128 bits in base64url. The same `_pk` always gives
// the same public id (a reconnect keeps its presence entry and its `from`; every shard of a room
// computes the same one), and the connection id cannot be recovered from it. Computed once per
// connection, when it opens, and kept in its attachment.

/** What the hash covers before the id, so a public id is no plain SHA-256 of the id found elsewhere. */
const DOMAIN = "dokit public id\u0000";

/** @returns the public id of connection id `id`: 22 base64url characters (128 bits of SHA-256) */
export async function derivePublicId(id: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(DOMAIN + id));
  return base64url(new Uint8Array(digest, 0, 16));
}

/**
 * @returns a random public id, for a connection opened before dokit kept one (its id is not hashed
 *   where that needs a wait); it keeps it from then on
 */
export function randomPublicId(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(16)));
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}
