// Refusing a WebSocket upgrade so that every client can read why. An HTTP error
// answer to an upgrade reaches a browser's WebSocket as a bare 1006 close (its
// body is never exposed), and a reconnecting client then retries forever. So
// dokit accepts the upgrade and closes the socket at once with a code in
// 4000–4999 (final for clients) and a reason that names the problem.

/** The most bytes a close reason may hold (a close frame's 125-byte payload less the 2-byte code). */
export const MAX_CLOSE_REASON_BYTES = 123;

const encoder = new TextEncoder();

/** @returns `reason` cut to at most 123 UTF-8 bytes, at a character boundary */
export function closeReason(reason: string): string {
  if (encoder.encode(reason).byteLength <= MAX_CLOSE_REASON_BYTES) return reason;
  let cut = "";
  for (const char of reason) {
    if (encoder.encode(cut + char).byteLength > MAX_CLOSE_REASON_BYTES) break;
    cut += char;
  }
  return cut;
}

/**
 * Answers an upgrade with a socket already closed with `code` and `reason`.
 *
 * A fresh non-hibernating socket: workerd completes a close issued from `fetch`
 * at once only for those (a hibernating socket closed outside a WebSocket event
 * leaves the client hanging in CLOSING).
 * @param code - a close code in 4000–4999 (protocol/frames.ts)
 * @param reason - what is wrong; cut to 123 bytes
 * @returns the 101 answer carrying the closed socket's client end
 */
export function refuseUpgrade(code: number, reason: string): Response {
  const { 0: client, 1: server } = new WebSocketPair();
  server.accept();
  server.close(code, closeReason(reason));
  return new Response(null, { status: 101, webSocket: client });
}
