import { evictDurableObject } from "cloudflare:test";
import { readAttachment } from "../websockets/attachment";

/**
 * Evicts the object behind `stub` the way the platform hibernates it: its
 * instance is torn down, storage is kept, and hibernating WebSockets stay open.
 * The next message wakes a fresh instance.
 */
export async function hibernate(stub: DurableObjectStub): Promise<void> {
  await evictDurableObject(stub, { webSockets: "hibernate" });
}

/**
 * Reads the attachment dokit stored on a server-side socket (inside
 * `runInDurableObject`), internal flags included.
 * @returns `{ __dokit: { id, tags, uri, readonly, protocol }, user }`, or `undefined` for a socket dokit did not accept
 */
export function connectionAttachment(ws: WebSocket): unknown {
  return readAttachment(ws);
}
