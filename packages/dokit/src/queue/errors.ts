import type { LifecycleErrorCode } from "../lifecycle/errors";
import type { JobErrorCode } from "../jobs/errors";

/** The codes the Queue (dokit/queue) throws with: the core's, and its own. */
export type QueueErrorCode = LifecycleErrorCode | JobErrorCode | "UNKNOWN_CALLBACK";
