import type { RetryOptions } from "../jobs/retry";
import type { JobPayload } from "../jobs/job-table";

/**
 * One pending item of a Queue (the reference's shape; `createdAt` is in seconds since the epoch).
 * @template T the callback's payload type
 */
export type QueueItem<T = unknown> = {
  /** The item's id: generated, or the one passed to `push`. */
  id: string;
  /** The name of the callback it runs. */
  callback: string;
  /** What the callback receives. */
  payload: T;
  /** When it was pushed, in seconds since the epoch. */
  createdAt: number;
  /** Its retry policy, when it overrides the Queue's. */
  retry?: RetryOptions;
  /** Set when the item failed its last attempt and was kept (`keepFailed`): it never runs again. */
  failed?: { error: string; attempts: number };
};

/** Any map of named callbacks: each receives its payload and the item. */
export type QueueHandlers = Record<string, (payload: never, item: never) => unknown>;

/** The callback surface of a Queue built without a typed map: any name, an untyped payload. */
export type QueueCallbacks = Record<string, (payload: unknown, item: QueueItem<unknown>) => unknown>;

/** The payload type a registered callback accepts. */
export type QueuePayload<Handler> = JobPayload<Handler>;

/** Options of one `push`. */
export interface QueuePushOptions {
  /** A stable id. Pushing it again replaces that item in place (it keeps its turn). */
  id?: string;
  /** The retry policy, overriding the Queue's. */
  retry?: RetryOptions;
}

/** Filters of `list()`. */
export interface QueueCriteria {
  /** Only items for this callback. */
  callback?: string;
}

/** Options of `new Queue(...)`. */
export interface QueueOptions<Handlers extends QueueHandlers = QueueCallbacks> {
  /** The named callbacks items may run. Register them unconditionally (a field initializer): a woken object finds them by name. */
  readonly callbacks?: Handlers;
  /** The default retry policy (default: 3 attempts, 100 ms doubling, at most 3 s apart). */
  readonly retry?: RetryOptions;
  /** Called once an item failed its last attempt, in the object's context. */
  readonly onError?: (error: unknown, item: QueueItem<unknown>) => unknown;
  /** Keep an item that failed its last attempt (listed with `failed`, never run again) instead of dropping it (default false). */
  readonly keepFailed?: boolean;
  /** Seconds an item may run before the deadman alarm runs it again (default 30). */
  readonly hungTimeoutSeconds?: number;
}
