import type { LifecycleErrorCode } from "../lifecycle/errors";

/** The codes Sessions (dokit/sessions) throws with: the core's, and its own. */
export type SessionsErrorCode =
  | LifecycleErrorCode
  /** A client-sourced message over `maxClientMessageBytes`: nothing was stored. */
  | "MESSAGE_TOO_LARGE"
  /** Not a message (no string id, no string role, no parts array) or not JSON-serializable. */
  | "INVALID_MESSAGE"
  /** `compact()` on a session without `onCompaction()`. */
  | "NO_COMPACTION";
