/**
 * The connection closed for good without `close()`: a final close code, or retries spent.
 * The message is the server's close reason (for dokit's own refusals, what is wrong and how to fix it).
 */
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
    super(reason || `WebSocket closed with code ${code}`);
    this.code = code;
    this.reason = reason;
    this.wasClean = wasClean;
  }
}

/** A protocol frame from the server that the client could not read: it was ignored. */
export class AgentFrameError extends Error {
  override readonly name = "AgentFrameError";
  /** The frame's `type` (`cf_agent_identity`, `cf_agent_state`, `rpc`, …). */
  readonly frameType: string;
  /** What is wrong with it, e.g. `name is not a string`. */
  readonly problem: string;

  /**
   * @param frameType - the frame's `type`
   * @param problem - what is wrong with it
   */
  constructor(frameType: string, problem: string) {
    super(`dokit: ignored a malformed ${frameType} frame from the server: ${problem}`);
    this.frameType = frameType;
    this.problem = problem;
  }
}

/** @returns whether a close code ends reconnection (1008 and 4000–4999) */
export function isFinalCloseCode(code: number): boolean {
  return code === 1008 || (code >= 4000 && code <= 4999);
}
