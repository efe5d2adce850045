/** Stable codes carried by every {@link DokitError}; match on `code`, never on the message. */
export type DokitErrorCode =
  | "DUPLICATE_CLAIM"
  | "RESERVED_NAME"
  | "LOCKED"
  | "HANDLER_CONFLICT"
  | "NOT_A_DURABLE_OBJECT"
  | "START_FAILED"
  | "METHOD_NOT_FOUND"
  | "INVALID_TARGET"
  | "INVALID_ARGUMENT"
  | "READONLY"
  | "INVALID_FRAME"
  | "INVALID_TAGS"
  | "ATTACHMENT_TOO_LARGE"
  | "INVALID_STATE"
  | "STATE_TOO_LARGE"
  | "NOT_INSTALLED"
  | "NO_SQLITE"
  | "NO_REQUEST"
  | "REFUSED"
  | "UNKNOWN_CALLBACK"
  | "INVALID_SCHEDULE"
  | "INVALID_PAYLOAD"
  | "INVALID_RETRY"
  | "JOB_INTERRUPTED"
  | "URL_NOT_ALLOWED"
  | "UNKNOWN_SERVER"
  | "SERVER_UNAVAILABLE"
  | "RECORD_TOO_LARGE";

/** The one error class of dokit. Messages start with `dokit:`; `code` is stable. */
export class DokitError extends Error {
  override readonly name = "DokitError";
  /** A stable string to branch on. */
  readonly code: DokitErrorCode;

  /**
   * @param code - the stable code
   * @param message - a sentence for the developer (prefixed with `dokit: `)
   * @param options - `cause`, when wrapping another error
   */
  constructor(code: DokitErrorCode, message: string, options?: ErrorOptions) {
    super(`dokit: ${message}`, options);
    this.code = code;
  }
}

/** A DokitError whose message clients see as is (no library prefix), and which is not logged. */
export class WireError extends DokitError {
  /**
   * @param code - the stable code
   * @param text - the exact text the client receives
   */
  constructor(code: DokitErrorCode, text: string) {
    super(code, text);
    this.message = text;
  }
}

/**
 * An expected refusal ("this board is view-only for you"): throw it from a
 * callable and the client's call fails with `message` as is, while the server
 * logs one line (no stack) instead of an error.
 */
export class Refusal extends WireError {
  /** @param message - what the client is told */
  constructor(message: string) {
    super("REFUSED", message);
  }
}

/** @returns the message of a thrown value (an Error's message, else the value as text; never a stack) */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** @returns whether `error` is a {@link DokitError}, optionally with the given code */
export function isDokitError(error: unknown, code?: DokitErrorCode): error is DokitError {
  return error instanceof DokitError && (code === undefined || error.code === code);
}
