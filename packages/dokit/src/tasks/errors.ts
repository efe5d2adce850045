import { DokitError } from "../lifecycle/errors";
import type { LifecycleErrorCode } from "../lifecycle/errors";
import type { JobErrorCode } from "../jobs/errors";

/** The codes Tasks (dokit/tasks) throws and records with: the core's, the job engine's, and its own. */
export type TasksErrorCode =
  | LifecycleErrorCode
  | JobErrorCode
  | "NON_RETRYABLE"
  | "REPLAY_DIVERGED"
  | "DUPLICATE_STEP"
  | "MISSING_DEFINITION"
  | "SERIALIZATION"
  | "STEP_TIMEOUT"
  | "EVENT_TIMEOUT"
  | "CANCELLED"
  | "WAIT_TIMEOUT"
  | "TOO_MANY_EVENTS";

/**
 * Thrown by a step callback to fail its run at once, skipping the remaining attempts. An error
 * from elsewhere whose `name` is `"NonRetryableError"` (say, `cloudflare:workflows`') counts the same.
 * Its message is the caller's own, without the `dokit:` prefix.
 */
export class NonRetryableError extends Error {
  override readonly name: string = "NonRetryableError";
  /** Always `"NON_RETRYABLE"`. */
  readonly code = "NON_RETRYABLE" as const;

  /**
   * @param message - why the run cannot go on
   * @param options - `cause`
   */
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * Tasks' own error: a DokitError (`dokit:` message, stable `code`) whose `name` is the reference's
 * class name, so a handler or a test can branch on either.
 */
class TasksError extends DokitError<TasksErrorCode> {}

/** A replay met a journal its code cannot have written (a step name under another kind): the run fails rather than guess. */
export class TaskReplayDivergedError extends TasksError {
  /** The step where replay left the journal. */
  readonly stepName: string;
  /**
   * @param stepName - the step
   * @param detail - what differed
   */
  constructor(stepName: string, detail: string) {
    super("REPLAY_DIVERGED", `Tasks: replay diverged at step "${stepName}": ${detail}; version the definition name instead of changing the step layout of runs in flight`);
    this.stepName = stepName;
    rename(this, "TaskReplayDivergedError");
  }
}

/** One execution used a step name twice: names are the journal's keys and must be unique in a run. */
export class DuplicateTaskStepError extends TasksError {
  /** The step name used twice. */
  readonly stepName: string;
  /** @param stepName - the name */
  constructor(stepName: string) {
    super("DUPLICATE_STEP", `Tasks: the step name "${stepName}" is used twice in one run; give every step (and loop step) a unique, stable name`);
    this.stepName = stepName;
    rename(this, "DuplicateTaskStepError");
  }
}

/** A run's definition name is not registered (a deployment removed or renamed it): the run fails, visibly. */
export class MissingTaskDefinitionError extends TasksError {
  /** The definition name that no longer resolves. */
  readonly definition: string;
  /** @param definition - the name */
  constructor(definition: string) {
    super("MISSING_DEFINITION", `Tasks: no definition named "${definition}" is registered in new Tasks({ definitions }) or with register()`);
    this.definition = definition;
    rename(this, "MissingTaskDefinitionError");
  }
}

/** An input, step result, metadata value, event payload or result is not JSON, or is over {@link MAX_SERIALIZED_BYTES}. */
export class TaskSerializationError extends TasksError {
  /**
   * @param context - what was being stored
   * @param detail - why it cannot be
   */
  constructor(context: string, detail: string) {
    super("SERIALIZATION", `Tasks: ${context} ${detail}`);
    rename(this, "TaskSerializationError");
  }
}

/** Any other failure of Tasks (a bad argument, a step timeout, a wait that timed out, …), told apart by `code`. */
export class TasksFailure extends TasksError {
  /**
   * @param code - the stable code
   * @param message - the sentence (prefixed with `dokit: `)
   */
  constructor(code: TasksErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
    rename(this, "TasksError");
  }
}

/** Sets `name` on an instance (the base class's field is a literal type; the reference's class names differ per class). */
function rename(error: Error, name: string): void {
  Object.defineProperty(error, "name", { value: name, configurable: true, writable: false, enumerable: false });
}

/** The most bytes one serialized value (input, step result, metadata, event payload, result) may take: 1 MiB. */
export const MAX_SERIALIZED_BYTES = 1_048_576;

/** @returns whether `error` asks to skip the remaining attempts */
export function isNonRetryable(error: unknown): boolean {
  return error instanceof NonRetryableError || (error instanceof Error && error.name === "NonRetryableError");
}
