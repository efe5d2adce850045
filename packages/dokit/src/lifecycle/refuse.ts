// Refusing a WebSocket upgrade so that every client can read why. An HTTP error
// answer to an upgrade reaches a browser's WebSocket as a bare 1006 close (its
// body is never exposed), and a reconnecting client then retries forever. So
// dokit accepts the upgrade and closes the socket at once with a code in
// 4000–4999 (final for clients) and a reason that names the problem.

/** The most bytes a close reason may hold (a close frame's 125-byte payload less the 2-byte code). */
export const MAX_CLOSE_REASON_BYTES = 123;

/** @returns `reason` cut to at most 123 UTF-8 bytes (a character cut in half becomes U+FFFD) */
export function closeReason(reason: string): string {
  const encoder = new TextEncoder();
  while (encoder.encode(reason).byteLength > MAX_CLOSE_REASON_BYTES) reason = reason.slice(0, -1);
  return reason;
}

/**
 * Answers an upgrade with a socket already closed with `code` and `reason`.
 *
 * A fresh non-hibernating socket: workerd completes a close issued from `fetch`
 * at once only for those (a hibernating socket closed outside a WebSocket event
 * leaves the client hanging in CLOSING).
 * @param code - a close code in 4000–4999 (protocol/close-codes.ts), or 1012 for a refusal clients retry
 * @param reason - what is wrong, at most 123 UTF-8 bytes (see {@link closeReason})
 * @returns the 101 answer carrying the closed socket's client end
 */
export function refuseUpgrade(code: number, reason: string): Response {
  const { 0: client, 1: server } = new WebSocketPair();
  server.accept();
  server.close(code, reason);
  return new Response(null, { status: 101, webSocket: client });
}
