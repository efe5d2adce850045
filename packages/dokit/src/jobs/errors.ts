import type { LifecycleErrorCode } from "../lifecycle/errors";

/** The codes the job engine (the Scheduler and the Queue) throws with: the core's, and its own. */
export type JobErrorCode = LifecycleErrorCode | "INVALID_PAYLOAD" | "INVALID_RETRY" | "JOB_INTERRUPTED";
