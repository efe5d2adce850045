// dokit's errors come in two kinds, kept apart: a DokitError is for the developer (a `dokit:`
// sentence, thrown by an API call or logged on the server); a WireError is what a client is
// told (the protocol's exact text, never logged as a failure). Each capability declares its own
// codes beside its code (`StateErrorCode` in state/errors.ts, …); the core's are below.

/** The codes the core throws with. */
export type LifecycleErrorCode =
  | "DUPLICATE_CLAIM"
  | "RESERVED_NAME"
  | "LOCKED"
  | "HANDLER_CONFLICT"
  | "NOT_A_DURABLE_OBJECT"
  | "START_FAILED"
  | "NOT_INSTALLED"
  | "NO_SQLITE"
  | "NO_REQUEST"
  | "INVALID_ARGUMENT";

/** An error for the developer. Messages start with `dokit:`; `code` is stable: match on it, never on the message. */
export class DokitError<Code extends string = string> extends Error {
  override readonly name: string = "DokitError";
  /** A stable string to branch on (each capability lists its own, e.g. `StateErrorCode`). */
  readonly code: Code;

  /**
   * @param code - the stable code
   * @param message - a sentence for the developer (prefixed with `dokit: `)
   * @param options - `cause`, when wrapping another error
   */
  constructor(code: Code, message: string, options?: ErrorOptions) {
    super(`dokit: ${message}`, options);
    this.code = code;
  }
}

/** An error whose message a client receives as is (no library prefix), and which is not logged as a failure. */
export class WireError<Code extends string = string> extends Error {
  override readonly name: string = "WireError";
  /** A stable string to branch on. */
  readonly code: Code;

  /**
   * @param code - the stable code
   * @param text - the exact text the client receives
   */
  constructor(code: Code, text: string) {
    super(text);
    this.code = code;
  }
}

/**
 * An expected refusal ("this board is view-only for you"): throw it from a
 * callable and the client's call fails with `message` as is, while the server
 * logs one line (no stack) instead of an error.
 */
export class Refusal extends WireError<"REFUSED"> {
  override readonly name = "Refusal";
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
export function isDokitError<Code extends string = string>(error: unknown, code?: Code): error is DokitError<Code> {
  return error instanceof DokitError && (code === undefined || error.code === code);
}
