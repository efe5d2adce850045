/** The connection closed for good without `close()`: a final close code, or retries spent. */
export class AgentConnectionError extends Error {
  override readonly name = "AgentConnectionError";
  /** The close code. */
  readonly code: number;
  /** The close reason. */
  readonly reason: string;
  /** Whether the close handshake completed. */
  readonly wasClean: boolean;

  /**
   * @param code - close code
   * @param reason - close reason
   * @param wasClean - whether the close was clean
   */
  constructor(code: number, reason: string, wasClean: boolean) {
    super(`Agent connection closed: ${reason || `WebSocket closed with code ${code}`}`);
    this.code = code;
    this.reason = reason;
    this.wasClean = wasClean;
  }
}

/** @returns whether a close code ends reconnection (1008 and 4000–4999) */
export function isFinalCloseCode(code: number): boolean {
  return code === 1008 || (code >= 4000 && code <= 4999);
}
