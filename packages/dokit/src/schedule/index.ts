export { Scheduler } from "./scheduler";
export { nextCronRun } from "./cron";
export type {
  Schedule,
  ScheduleCriteria,
  ScheduleOptions,
  SchedulerCallbacks,
  SchedulerHandlers,
  SchedulerOptions,
  SchedulerPayload,
  ScheduleType,
} from "./types";
export type { RetryOptions } from "../jobs/retry";
export type { ScheduleErrorCode } from "./errors";
