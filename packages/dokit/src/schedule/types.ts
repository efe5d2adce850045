import type { RetryOptions } from "../jobs/retry";
import type { JobPayload } from "../jobs/job-table";

/**
 * A stored schedule, as `set`, `every`, `get` and `list` return it (the
 * reference's shape; `time` is in seconds since the epoch).
 * @template T the callback's payload type
 */
export type Schedule<T = string> = {
  /** The schedule's id: generated, or the one passed in the options. */
  id: string;
  /** The name of the callback it runs. */
  callback: string;
  /** What the callback receives. */
  payload: T;
  /** Its retry policy, when it overrides the Scheduler's. */
  retry?: RetryOptions;
  /** Set when a one-shot schedule failed its last attempt and was kept (`keepFailed`): it never runs again. */
  failed?: { error: string; attempts: number };
} & (
  | { /** One run at a date. */ type: "scheduled"; /** Seconds since the epoch. */ time: number }
  | {
      /** One run after a delay. */ type: "delayed";
      /** Seconds since the epoch. */ time: number;
      /** The delay it was set with, in seconds. */ delayInSeconds: number;
    }
  | {
      /** Runs at each match of a cron expression. */ type: "cron";
      /** The next run, in seconds since the epoch. */ time: number;
      /** The 5-field cron expression. */ cron: string;
      /** The IANA time zone the expression is read in (UTC when absent). */ timeZone?: string;
    }
  | {
      /** Runs at a fixed interval. */ type: "interval";
      /** The next run, in seconds since the epoch. */ time: number;
      /** Seconds between runs. */ intervalSeconds: number;
    }
);

/** The kinds of schedule. */
export type ScheduleType = Schedule["type"];

/** Any map of named callbacks: each receives its payload and the schedule that fired. */
export type SchedulerHandlers = Record<string, (payload: never, schedule: never) => unknown>;

/** The callback surface of a Scheduler built without a typed map: any name, an untyped payload. */
export type SchedulerCallbacks = Record<string, (payload: unknown, schedule: Schedule<unknown>) => unknown>;

/** The payload type a registered callback accepts. */
export type SchedulerPayload<Handler> = JobPayload<Handler>;

/** Options of one `set` or `every`. */
export interface ScheduleOptions {
  /**
   * A stable id you choose (dokit; the reference generates ids). Setting it again
   * replaces that schedule, never duplicates it.
   */
  id?: string;
  /** The retry policy, overriding the Scheduler's. */
  retry?: RetryOptions;
  /**
   * Reuse an existing schedule with the same callback, kind, timing and payload
   * instead of adding one. Default: `true` for cron and interval schedules, `false` for one-shots.
   */
  idempotent?: boolean;
  /** For a cron expression: the IANA time zone it is read in (default UTC; dokit). */
  timeZone?: string;
}

/** Filters of `list()`. */
export interface ScheduleCriteria {
  id?: string;
  type?: ScheduleType;
  /** Schedules whose next run lies in this range. */
  timeRange?: { start?: Date; end?: Date };
}

/** Options of `new Scheduler(...)`. */
export interface SchedulerOptions<Handlers extends SchedulerHandlers = SchedulerCallbacks> {
  /** The named callbacks schedules may run. Register them unconditionally (a field initializer): a woken object finds them by name. */
  readonly callbacks?: Handlers;
  /** The default retry policy (default: 3 attempts, 100 ms doubling, at most 3 s apart). */
  readonly retry?: RetryOptions;
  /** Called once a run failed its last attempt, in the object's context. */
  readonly onError?: (error: unknown, schedule: Schedule<unknown>) => unknown;
  /** Keep a one-shot schedule that failed its last attempt (listed with `failed`, never run again) instead of deleting it (default false). */
  readonly keepFailed?: boolean;
  /** Seconds a run may take before the deadman alarm runs it again (default 30). */
  readonly hungTimeoutSeconds?: number;
}

/** What a schedule row stores besides the common job columns, as JSON (internal; not exported by dokit/schedule). */
export type ScheduleSpec = {
  type: ScheduleType;
  delayInSeconds?: number;
  cron?: string;
  timeZone?: string;
  intervalSeconds?: number;
  /** An interval's first due time: every run lies on anchor + k · interval. */
  anchor?: number;
  retry?: RetryOptions;
};
