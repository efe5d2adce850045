import { errorMessage } from "../lifecycle/errors";
import { isAlarmTime } from "../lifecycle/alarms";
import { durationMs } from "./duration";
import { DuplicateTaskStepError, isNonRetryable, NonRetryableError, TaskReplayDivergedError, TasksFailure } from "./errors";
import { resolvePolicy, retryDelayMs, type StepPolicy } from "./policy";
import type { StepRow, TaskStore } from "./store";
import type { TaskDurationString } from "./duration";
import type { TaskEventType, TaskJson, TaskStep, TaskStepAttempt, TaskStepConfig, TaskValue, TaskWaitForEventOptions, TaskWaitReason } from "./types";
import { parse, serialize } from "./values";

// One execution attempt of a run: the handler runs from its first line with
// this object as its `step`. Settled journal entries answer at once; the first
// unsettled one runs (a `do`), or parks the run (a sleep, a retry's delay, an
// event not yet sent). Parking and losing the run unwind the handler by a throw
// that is remembered here, so a handler that catches it still ends the attempt.

/** The attempt ends and the run waits (thrown through the handler). */
export class Park extends Error {
  override readonly name = "TaskParked";
  constructor(
    readonly reason: TaskWaitReason,
    readonly wakeAt: number | null,
  ) {
    super(`dokit: Tasks: the run waits (${reason}); let this propagate out of the handler`);
  }
}

/** The attempt no longer holds its run (cancelled, or taken over): it ends without another write. */
export class Lost extends Error {
  override readonly name = "TaskAttemptLost";
  constructor() {
    super("dokit: Tasks: this attempt no longer holds its run (cancelled or taken over); its writes are rejected");
  }
}

/** How an attempt ended. */
export type Outcome =
  | { kind: "completed"; result: string | null }
  | { kind: "failed"; error: unknown }
  | { kind: "parked"; reason: TaskWaitReason; wakeAt: number | null }
  | { kind: "lost" };

/** What an attempt needs from its Tasks. */
export interface AttemptHost {
  readonly store: TaskStore;
  readonly policy: StepPolicy;
  publish(type: TaskEventType, payload: Record<string, unknown>): void;
}

/** The longest step name and event type, in characters. */
const MAX_NAME = 256;
/** The longest status message kept, in characters. */
const MAX_STATUS = 4096;

/** One execution attempt; it is the `step` its handler receives. */
export class Attempt implements TaskStep {
  readonly interrupted: { readonly name: string; readonly attempt: number } | null;
  readonly #host: AttemptHost;
  readonly #run: string;
  readonly #claim: string;
  /** Aborted when the run is cancelled: every live step callback's signal follows it. */
  readonly #cancel = new AbortController();
  readonly #names = new Set<string>();
  /** Journal entries when the attempt began: until it has visited them all, it replays old ground. */
  readonly #known: number;
  #seen = 0;
  /** Why the attempt must end (the first reason), once it must. */
  #halt: Error | undefined;

  constructor(host: AttemptHost, run: string, claim: string, interrupted: { name: string; attempt: number } | null) {
    this.#host = host;
    this.#run = run;
    this.#claim = claim;
    this.interrupted = interrupted;
    this.#known = host.store.stepCount(run);
  }

  /** Aborts the live step callback (the run was cancelled); nothing this attempt does is written after. */
  cancel(reason: unknown): void {
    this.#halt ??= new Lost();
    this.#cancel.abort(reason);
  }

  /** Runs the handler once. */
  async execute(handler: (input: unknown, step: TaskStep) => unknown, input: unknown): Promise<Outcome> {
    let value: unknown;
    let thrown: unknown;
    let threw = false;
    try {
      value = await handler(input, this);
    } catch (error) {
      threw = true;
      thrown = error;
    }
    const halt = this.#halt;
    // Steps called after the handler returned (not awaited) find the attempt over.
    this.#halt ??= new Lost();
    if (halt instanceof Lost) return { kind: "lost" };
    if (halt instanceof Park) return { kind: "parked", reason: halt.reason, wakeAt: halt.wakeAt };
    if (halt) return { kind: "failed", error: halt };
    if (threw) return { kind: "failed", error: thrown };
    try {
      return { kind: "completed", result: serialize(value, "the run's result") };
    } catch (error) {
      return { kind: "failed", error };
    }
  }

  // ------------------------------------------------------------------ the step API

  /** @returns the idempotency key `step.do(name, …)` receives: the same across attempts and replays */
  idempotencyKey(name: string): string {
    return `${this.#run}:${name}`;
  }

  async do<T extends TaskValue>(
    name: string,
    configOrCallback: TaskStepConfig | ((attempt: TaskStepAttempt) => T | Promise<T>),
    maybeCallback?: (attempt: TaskStepAttempt) => T | Promise<T>,
  ): Promise<T> {
    const [config, callback] = typeof configOrCallback === "function" ? [undefined, configOrCallback] : [configOrCallback, maybeCallback];
    if (typeof callback !== "function") throw new TasksFailure("INVALID_ARGUMENT", `Tasks: step.do("${String(name)}") needs a callback`);
    const entry = this.#enter(name, "do");
    // SAFETY: the journal holds what this step's callback returned, as JSON.
    if (entry?.state === "done") return this.#replayed(entry) as T;
    if (entry?.state === "failed") throw this.#replayedError(entry);
    const now = Date.now();
    if (entry?.state === "retry" && entry.wake_at !== null && entry.wake_at > now) this.#park("retry", entry.wake_at);
    const policy = resolvePolicy(config, this.#host.policy);
    const attempt = (entry?.attempts ?? 0) + 1;
    if (attempt > policy.limit) {
      // Only reachable when the last attempt was lost with its isolate (a thrown failure stops earlier).
      const error = new TasksFailure("JOB_INTERRUPTED", `Tasks: step "${name}" was cut short on its last attempt (${policy.limit})`);
      this.#write(name, entry, "failed", policy.limit, null, null, errorJson(error));
      throw error;
    }
    this.#write(name, entry, "running", attempt, null, null, null);
    this.#host.publish("task:step:started", { runId: this.#run, step: name, attempt });

    const controller = new AbortController();
    const onCancel = () => controller.abort(this.#cancel.signal.reason);
    this.#cancel.signal.addEventListener("abort", onCancel);
    const timer = setTimeout(
      () => controller.abort(new TasksFailure("STEP_TIMEOUT", `Tasks: step "${name}" attempt ${attempt} timed out after ${policy.timeoutMs} ms`)),
      policy.timeoutMs,
    );
    let result: unknown;
    let failure: unknown;
    let failed = false;
    try {
      const context: TaskStepAttempt = { attempt, idempotencyKey: this.idempotencyKey(name), signal: controller.signal };
      result = await Promise.race([(async () => callback(context))(), rejectOnAbort(controller.signal)]);
    } catch (error) {
      failed = true;
      failure = error;
    } finally {
      clearTimeout(timer);
      this.#cancel.signal.removeEventListener("abort", onCancel);
    }
    // Cancelled, or taken over, while the callback ran: its result is not written.
    this.#checkHeld();
    let retryable = !failed || !isNonRetryable(failure);
    if (!failed) {
      try {
        const json = serialize(result, `the result of step "${name}"`);
        this.#write(name, entry, "done", attempt, json, null, null);
        this.#host.publish("task:step:completed", { runId: this.#run, step: name, attempt });
        // SAFETY: the JSON of what the callback returned; a replay returns the same.
        return parse(json) as T;
      } catch (error) {
        failure = error;
        retryable = false;
      }
    }
    if (retryable && attempt < policy.limit) {
      const wakeAt = Date.now() + retryDelayMs(policy, attempt);
      this.#write(name, entry, "retry", attempt, null, wakeAt, errorJson(failure));
      this.#host.publish("task:step:retry", { runId: this.#run, step: name, attempt, maxAttempts: policy.limit, error: errorMessage(failure), wakeAt });
      this.#park("retry", wakeAt);
    }
    this.#write(name, entry, "failed", attempt, null, null, errorJson(failure));
    throw failure;
  }

  sleep(name: string, duration: number | TaskDurationString): Promise<void> {
    const ms = durationMs(duration, `the duration of sleep "${String(name)}"`);
    return this.#sleep(name, () => Date.now() + ms);
  }

  sleepUntil(name: string, when: number | Date): Promise<void> {
    const at = when instanceof Date ? when.getTime() : when;
    if (!isAlarmTime(at)) throw new TasksFailure("INVALID_ARGUMENT", `Tasks: sleepUntil("${String(name)}") needs a Date or ms since the epoch that an alarm can be set to`);
    return this.#sleep(name, () => at);
  }

  async #sleep(name: string, deadline: () => number): Promise<void> {
    const entry = this.#enter(name, "sleep");
    if (entry?.state === "done") return;
    // The first deadline recorded is kept: a replay before it parks again, one after it goes on.
    const wakeAt = entry?.wake_at ?? deadline();
    if (wakeAt <= Date.now()) {
      this.#write(name, entry, "done", 0, null, wakeAt, null);
      return;
    }
    if (!entry) this.#write(name, entry, "waiting", 0, null, wakeAt, null);
    this.#park("sleep", wakeAt);
  }

  async waitForEvent<T extends TaskValue = TaskJson>(name: string, options: TaskWaitForEventOptions): Promise<T> {
    const type = options?.type;
    if (typeof type !== "string" || type.length === 0 || type.length > MAX_NAME) {
      throw new TasksFailure("INVALID_ARGUMENT", `Tasks: waitForEvent("${String(name)}") needs a type: a non-empty string of at most ${MAX_NAME} characters`);
    }
    const timeoutMs = options.timeout === undefined ? undefined : durationMs(options.timeout, `the timeout of waitForEvent "${name}"`);
    const entry = this.#enter(name, "event");
    if (entry && entry.detail !== type && entry.state !== "done" && entry.state !== "failed") {
      this.#fatal(new TaskReplayDivergedError(name, `the journal waits for an event of type "${entry.detail}", the code for "${type}"`));
    }
    // SAFETY: the journal holds the payload of the event sent for this step.
    if (entry?.state === "done") return this.#replayed(entry) as T;
    if (entry?.state === "failed") throw this.#replayedError(entry);
    const now = Date.now();
    const wakeAt = entry ? entry.wake_at : timeoutMs === undefined ? null : now + timeoutMs;
    const store = this.#host.store;
    const event = store.peekEvent(this.#run, type);
    if (event) {
      this.#checkHeld();
      // One synchronous turn: the event is consumed and journaled together.
      store.deleteEvent(event.seq);
      this.#write(name, entry, "done", 1, event.payload, wakeAt, type);
      // SAFETY: the payload sent for this event type, as JSON.
      return parse(event.payload) as T;
    }
    if (wakeAt !== null && wakeAt <= now) {
      const error = new TasksFailure("EVENT_TIMEOUT", `Tasks: no "${type}" event reached step "${name}" before its timeout`);
      this.#write(name, entry, "failed", 1, null, wakeAt, errorJson(error));
      throw error;
    }
    if (!entry) this.#write(name, entry, "waiting", 0, null, wakeAt, type);
    this.#park("event", wakeAt);
  }

  async status(message: string): Promise<void> {
    this.#checkHalt();
    if (this.#seen < this.#known) return; // old ground: this message was written when it was new
    if (!this.#host.store.setStatus(this.#run, this.#claim, String(message).slice(0, MAX_STATUS))) this.#lose();
  }

  // ------------------------------------------------------------------ internals

  /**
   * Checks a step call before it reads its journal entry.
   * @returns the entry under `name`, if any
   * @throws DuplicateTaskStepError, TaskReplayDivergedError (the run then fails), what ended the attempt
   */
  #enter(name: string, kind: StepRow["kind"]): StepRow | undefined {
    this.#checkHalt();
    if (typeof name !== "string" || name.length === 0 || name.length > MAX_NAME) {
      throw new TasksFailure("INVALID_ARGUMENT", `Tasks: a step name must be a non-empty string of at most ${MAX_NAME} characters`);
    }
    if (this.#names.has(name)) this.#fatal(new DuplicateTaskStepError(name));
    this.#names.add(name);
    this.#kinds.set(name, kind);
    const entry = this.#host.store.step(this.#run, name);
    if (entry) this.#seen++;
    if (entry && entry.kind !== kind) this.#fatal(new TaskReplayDivergedError(name, `the journal has a "${entry.kind}" step under this name, the code a "${kind}"`));
    return entry;
  }

  #replayed(entry: StepRow): unknown {
    return parse(entry.result);
  }

  #replayedError(entry: StepRow): Error {
    return restoreError(entry.detail);
  }

  /** Writes a journal entry, or ends the attempt when it no longer holds its run. */
  #write(name: string, entry: StepRow | undefined, state: StepRow["state"], attempts: number, result: string | null, wakeAt: number | null, detail: string | null): void {
    const written = this.#host.store.writeStep(this.#claim, {
      run: this.#run,
      name,
      ...(entry ? { ord: entry.ord } : {}),
      kind: entry?.kind ?? this.#kinds.get(name) ?? "do",
      state,
      attempts,
      result,
      wake_at: wakeAt,
      detail,
      updated: Date.now(),
    });
    if (!written) this.#lose();
  }

  /** The kind each name was entered as in this attempt. */
  readonly #kinds = new Map<string, StepRow["kind"]>();

  #checkHalt(): void {
    if (this.#halt) throw this.#halt;
  }

  #checkHeld(): void {
    this.#checkHalt();
    if (this.#host.store.claimOf(this.#run) !== this.#claim) this.#lose();
  }

  #park(reason: TaskWaitReason, wakeAt: number | null): never {
    const park = new Park(reason, wakeAt);
    this.#halt = park;
    throw park;
  }

  #lose(): never {
    const lost = new Lost();
    this.#halt ??= lost;
    throw this.#halt;
  }

  #fatal(error: Error): never {
    this.#halt ??= error;
    throw error;
  }
}

/** @returns a promise that rejects with the signal's reason once it aborts */
function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

/** @returns an error's safe projection as JSON (name, message, code), for the journal */
export function errorJson(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return JSON.stringify({
    name: error instanceof Error ? error.name : "Error",
    message: errorMessage(error).slice(0, 4096),
    ...(typeof code === "string" ? { code } : {}),
  });
}

/** @returns the error a failed step threw, rebuilt from the journal (a replay throws the same name and message) */
function restoreError(detail: string | null): Error {
  const { name, message, code } = (detail ? JSON.parse(detail) : { name: "Error", message: "" }) as { name: string; message: string; code?: string };
  if (name === "NonRetryableError") return new NonRetryableError(message);
  const error = new Error(message);
  Object.defineProperty(error, "name", { value: name, configurable: true });
  if (code !== undefined) Object.defineProperty(error, "code", { value: code, enumerable: true });
  return error;
}
