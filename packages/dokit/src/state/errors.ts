import type { LifecycleErrorCode } from "../lifecycle/errors";

/** The codes State (dokit/state) throws with: the core's, and its own. */
export type StateErrorCode = LifecycleErrorCode | "INVALID_STATE" | "STATE_TOO_LARGE";
