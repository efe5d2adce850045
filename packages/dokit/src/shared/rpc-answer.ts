import { RpcTarget } from "cloudflare:workers";
import type { Connection } from "../lifecycle/connection";
import { errorMessage } from "../lifecycle/errors";
import { RPC, rpcErrors } from "../protocol/frames";
import { trySend } from "./wire";

// Serializes rpc answers (docs/protocol.md, "rpc").

/** Sends `{"type":"rpc","id":…,"success":false,"error":…}`. */
export function sendError(connection: Connection, id: string, error: string): void {
  trySend(connection, JSON.stringify({ type: RPC, id, success: false, error }));
}

/**
 * Sends a method's result: one frame, or for a ReadableStream one frame per
 * chunk and a done frame (an error frame when the stream fails midway).
 */
export async function sendResult(connection: Connection, id: string, method: string, result: unknown): Promise<void> {
  if (result instanceof ReadableStream) return streamResult(connection, id, result);
  if (result instanceof RpcTarget) return sendError(connection, id, rpcErrors.rpcTargetResult(method));
  const frame = serialize(id, true, result);
  if (frame.ok) trySend(connection, frame.text);
  else sendError(connection, id, rpcErrors.notSerializable(frame.reason));
}

async function streamResult(connection: Connection, id: string, stream: ReadableStream): Promise<void> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const frame = serialize(id, false, value);
      if (!frame.ok) {
        await reader.cancel().catch(() => {});
        return sendError(connection, id, rpcErrors.notSerializable(frame.reason));
      }
      if (!trySend(connection, frame.text)) {
        await reader.cancel().catch(() => {});
        return;
      }
    }
    trySend(connection, JSON.stringify({ type: RPC, id, success: true, done: true }));
  } catch (error) {
    sendError(connection, id, errorMessage(error));
  } finally {
    reader.releaseLock();
  }
}

function serialize(id: string, done: boolean, result: unknown): { ok: true; text: string } | { ok: false; reason: string } {
  try {
    return { ok: true, text: JSON.stringify({ type: RPC, id, success: true, done, result }) };
  } catch (error) {
    return { ok: false, reason: errorMessage(error) };
  }
}
