import { RpcTarget } from "cloudflare:workers";
import type { Connection } from "../lifecycle/connection";
import { errorMessage } from "../lifecycle/errors";
import { RPC, rpcErrors } from "../protocol/agents";
import { trySend } from "../frames/send";

// Serializes rpc answers (docs/protocol.md, "rpc").

/** Sends `{"type":"rpc","id":…,"success":false,"error":…}`. */
export function sendError(connection: Connection, id: string, error: string): void {
  trySend(connection, JSON.stringify({ type: RPC, id, success: false, error }));
}

/**
 * Sends a method's result: one frame, or for a ReadableStream one frame per
 * chunk and a done frame (an error frame when the stream fails midway).
 * @returns the error text sent instead of a result, `undefined` for one result frame, or for a
 *   stream a promise of the number of chunks streamed (or the error text sent when it failed)
 */
export function sendResult(connection: Connection, id: string, method: string, result: unknown): Promise<string | number> | string | undefined {
  if (result instanceof ReadableStream) return streamResult(connection, id, result);
  // One frame: sent synchronously (no promise per call).
  const frame = result instanceof RpcTarget ? { ok: false as const, error: rpcErrors.rpcTargetResult(method) } : serialize(id, true, result);
  if (frame.ok) trySend(connection, frame.text);
  else return failWith(connection, id, frame.error);
  return undefined;
}

/** Sends an rpc error frame. @returns its text */
function failWith(connection: Connection, id: string, error: string): string {
  sendError(connection, id, error);
  return error;
}

/** @returns the number of chunks sent, or the error text sent when the stream failed */
async function streamResult(connection: Connection, id: string, stream: ReadableStream): Promise<string | number> {
  const reader = stream.getReader();
  let chunks = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const frame = serialize(id, false, value);
      if (!frame.ok) {
        await reader.cancel().catch(() => {});
        return failWith(connection, id, frame.error);
      }
      if (!trySend(connection, frame.text)) {
        await reader.cancel().catch(() => {});
        return chunks;
      }
      chunks++;
    }
    trySend(connection, JSON.stringify({ type: RPC, id, success: true, done: true }));
    return chunks;
  } catch (error) {
    return failWith(connection, id, errorMessage(error));
  } finally {
    reader.releaseLock();
  }
}

function serialize(id: string, done: boolean, result: unknown): { ok: true; text: string } | { ok: false; error: string } {
  try {
    return { ok: true, text: JSON.stringify({ type: RPC, id, success: true, done, result }) };
  } catch (error) {
    return { ok: false, error: rpcErrors.notSerializable(errorMessage(error)) };
  }
}
