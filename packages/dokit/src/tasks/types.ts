import type { TaskEvent } from "../observability/events";
import type { TaskDurationString } from "./duration";

/** JSON data: what inputs, step results, metadata, event payloads and results are. */
export type TaskJson = string | number | boolean | null | TaskJson[] | { [key: string]: TaskJson };

/** What a handler or a step callback may produce; `undefined` (and `void`) is stored as nothing and restored as `undefined`. */
export type TaskValue = TaskJson | undefined | void;

/** Any map of named definitions: each replays from its first line on every execution attempt. */
export type TaskHandlers = Record<string, (input: never, step: TaskStep) => TaskValue | Promise<TaskValue>>;

/** The definitions surface of a Tasks built without a typed map: any name, an untyped input. */
export type TaskCallbacks = Record<string, (input: unknown, step: TaskStep) => TaskValue | Promise<TaskValue>>;

/** The input a definition accepts. */
export type TaskInput<Handler> = Handler extends (input: infer Input, ...rest: never[]) => unknown ? Input : never;

/** The result a definition settles with. */
export type TaskOutput<Handler> = Handler extends (...args: never[]) => infer Output ? (Awaited<Output> extends TaskValue ? Awaited<Output> : never) : never;

/** What one `step.do()` callback attempt receives. */
export interface TaskStepAttempt {
  /** This step's attempt, from 1 (an attempt cut short by a lost isolate counts). */
  readonly attempt: number;
  /** A key identical across the step's attempts and replays: pass it to services that deduplicate. */
  readonly idempotencyKey: string;
  /** Aborted when the run is cancelled or this attempt's timeout elapses. */
  readonly signal: AbortSignal;
}

/** Retry and timeout policy of one `step.do()`. */
export interface TaskStepConfig {
  retries?: {
    /** Attempts in all, the first included (default 5). */
    limit?: number;
    /** The delay before the first retry (default 1 second). */
    delay?: number | TaskDurationString;
    /** How the delay grows: `"constant"`, `"linear"` or `"exponential"` (default). */
    backoff?: "constant" | "linear" | "exponential";
  };
  /** The timeout of one callback attempt (default 5 minutes). */
  timeout?: number | TaskDurationString;
}

/** Options of `step.waitForEvent()`. */
export interface TaskWaitForEventOptions {
  /** The event type to wait for (`tasks.sendEvent(runId, type, payload)`). */
  type: string;
  /** How long to wait before the step fails with `EVENT_TIMEOUT` (default: no limit). */
  timeout?: number | TaskDurationString;
}

/**
 * The step API a handler receives. Named steps are the run's durable journal: `do` keeps a
 * completed result, sleeps keep their first deadline, and both end the execution attempt
 * instead of holding the object while they wait.
 */
export interface TaskStep {
  /** The step a lost isolate left mid-execution (`{ name, attempt }`), or `null` on a clean attempt. */
  readonly interrupted: { readonly name: string; readonly attempt: number } | null;
  /** Runs a named step once; later replays return its journaled result. */
  do<T extends TaskValue>(name: string, callback: (attempt: TaskStepAttempt) => T | Promise<T>): Promise<T>;
  /** Runs a named step once with a retry and timeout policy. */
  do<T extends TaskValue>(name: string, config: TaskStepConfig, callback: (attempt: TaskStepAttempt) => T | Promise<T>): Promise<T>;
  /** Sleeps durably: the first deadline recorded is kept across replays. */
  sleep(name: string, duration: number | TaskDurationString): Promise<void>;
  /** Sleeps durably until a wall-clock time. */
  sleepUntil(name: string, when: number | Date): Promise<void>;
  /** Updates the run's progress message; replays over old ground stay silent. */
  status(message: string): Promise<void>;
  /** @returns the idempotency key `step.do(name, …)` receives */
  idempotencyKey(name: string): string;
  /**
   * Parks the run durably until `tasks.sendEvent(runId, type, payload)` delivers an event of
   * `type` (one sent before the run got here is kept for it), or fails the step with
   * `EVENT_TIMEOUT` once `timeout` elapsed.
   * @returns the event's payload
   */
  waitForEvent<T extends TaskValue = TaskJson>(name: string, options: TaskWaitForEventOptions): Promise<T>;
}

/** The states of a run. */
export type TaskRunState = "pending" | "running" | "waiting" | "completed" | "failed" | "cancelled";

/** Why a waiting run waits: a sleep, a retry's delay, or an event (dokit's addition). */
export type TaskWaitReason = "sleep" | "retry" | "event";

/** The safe projection of a failed run's error. */
export interface TaskError {
  name: string;
  message: string;
}

/** Options of one `run()`. */
export interface TaskRunOptions {
  /** Runs started with the same key join one run. */
  idempotencyKey?: string;
  /** The run's id (generated when omitted); an existing id joins that run. */
  runId?: string;
  /** JSON kept with the run. */
  metadata?: Record<string, TaskJson>;
  /** Keep the run once it settled, for inspection (default `true`); `false` deletes it at settlement. */
  retain?: boolean;
}

/** What `run()` returns: `accepted: false` when it joined an existing run (not an error). */
export interface TaskReceipt {
  runId: string;
  definition: string;
  accepted: boolean;
  state: TaskRunState;
  createdAt: number;
}

type Common = { runId: string; definition: string; createdAt: number; metadata?: Record<string, TaskJson> };

/** One run as read, by state. Times are ms since the epoch. */
export type TaskRunSnapshot<Output extends TaskValue> =
  | (Common & { state: "pending" })
  | (Common & { state: "running"; attempt: number; startedAt: number; statusMessage?: string })
  | (Common & { state: "waiting"; reason: TaskWaitReason; wakeAt: number; statusMessage?: string })
  | (Common & { state: "completed"; result: Output; settledAt: number })
  | (Common & { state: "failed"; error: TaskError; settledAt: number })
  | (Common & { state: "cancelled"; reason?: string; settledAt: number });

/** A typed lens on one definition's runs, from `tasks.handle(name)`; it holds no state. */
export interface Task<Input, Output extends TaskValue> {
  readonly name: string;
  /** Starts (or joins) a run of this definition. */
  run(input: Input, options?: TaskRunOptions): Promise<TaskReceipt>;
  /** @returns one run of this definition, or `null` */
  get(runId: string): Promise<TaskRunSnapshot<Output> | null>;
  /** @returns the run of this definition started with `idempotencyKey`, or `null` */
  getByIdempotencyKey(idempotencyKey: string): Promise<TaskRunSnapshot<Output> | null>;
  /** Cancels a run of this definition. @returns true when a run that had not settled was cancelled */
  cancel(runId: string, reason?: string): Promise<boolean>;
}

/** The events Tasks publishes on `agents:task` (the reference's names, as dokit/observability lists them). */
export type TaskEventType = TaskEvent["type"];

/** Options of `new Tasks(...)`. */
export interface TasksOptions<Handlers extends TaskHandlers = TaskCallbacks> {
  /** The definitions runs may name. Declare them in a field initializer: a woken object finds them by name. */
  readonly definitions?: Handlers;
  /** The default step retry policy (5 attempts, 1 second, exponential), overridable per `step.do()`. */
  readonly retries?: TaskStepConfig["retries"];
  /** The default timeout of one step callback attempt (5 minutes). */
  readonly stepTimeout?: number | TaskDurationString;
  /** Called once a run failed, in the object's context. */
  readonly onError?: (error: unknown) => void | Promise<void>;
  /** Seconds without news from a live attempt before its run is taken over as interrupted (default 30). */
  readonly hungTimeoutSeconds?: number;
}

/** Filters of `list()`. */
export type TaskListOptions = {
  definition?: string;
  /** The reference's name for the state filter. */
  status?: TaskRunState | TaskRunState[];
  /** The same filter as `status`. */
  state?: TaskRunState | TaskRunState[];
  /** At most this many runs (default 100, at most 1,000). */
  limit?: number;
};

/** Filters of `delete()`. */
export type TaskDeleteOptions = {
  /** Which settled states (default all three). */
  status?: Array<"completed" | "failed" | "cancelled">;
  /** Only runs settled before this time. */
  settledBefore?: Date;
  /** At most this many runs (default: all). */
  limit?: number;
};

/** Options of `tasks.wait()`. */
export interface TaskWaitOptions {
  /** How long to wait before giving up with `WAIT_TIMEOUT` (default 1 minute). */
  timeout?: number | TaskDurationString;
  /** Stops waiting (rejects with its reason) when aborted. */
  signal?: AbortSignal;
}
