// Tests' view of a connection's public id (src/websockets/public-id.ts): the same SHA-256 derivation,
// computed synchronously with node:crypto (Node, and workerd with nodejs_compat), so expected frames
// can be written inline.
import { createHash } from "node:crypto";

/** @returns the public id dokit shows others of connection id `id` */
export function publicIdOf(id: string): string {
  return createHash("sha256").update(`dokit public id\u0000${id}`).digest().subarray(0, 16).toString("base64url");
}
