import type { LifecycleErrorCode } from "../lifecycle/errors";
import type { JobErrorCode } from "../jobs/errors";

/** The codes the Scheduler (dokit/schedule) throws with: the core's, and its own. */
export type ScheduleErrorCode = LifecycleErrorCode | JobErrorCode | "INVALID_SCHEDULE" | "UNKNOWN_CALLBACK";
