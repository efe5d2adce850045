// Closing a socket with a code the platform accepts, and counting the closes
// started: every close started outside WebSockets' own bookkeeping makes its kept
// count of open sockets stale (websockets/open-connections.ts reads the count).
import { RESERVED_CLOSE_CODES } from "../protocol/close-codes";

/** Closes started on this isolate's sockets so far, by dokit or by server code (see {@link closeStarted}). */
let closes = 0;

/**
 * A close was started on a socket whose owner is not known here (closeWith, a Connection's close):
 * every kept count of open sockets in the isolate is stale (websockets/open-connections.ts).
 */
export function closeStarted(): void {
  closes++;
}

/** @returns how many closes were started on this isolate's sockets */
export function closeCount(): number {
  return closes;
}

/**
 * Closes `socket` with `code` and `reason`, or without a code for the codes no
 * endpoint may send (1005, 1006, 1015); ignores a socket that is already closed.
 */
export function closeWith(socket: WebSocket, code: number, reason: string): void {
  closeStarted();
  try {
    if (RESERVED_CLOSE_CODES.has(code)) socket.close();
    else socket.close(code, reason);
  } catch {
    // Already closed (the runtime may have answered the client's close itself).
  }
}
