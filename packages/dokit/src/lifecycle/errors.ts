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
  | "NOT_INSTALLED";

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

/** @returns the message of a thrown value (an Error's message, else the value as text; never a stack) */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** @returns whether `error` is a {@link DokitError}, optionally with the given code */
export function isDokitError(error: unknown, code?: DokitErrorCode): error is DokitError {
  return error instanceof DokitError && (code === undefined || error.code === code);
}
