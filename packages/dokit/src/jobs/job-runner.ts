import { type AlarmWork, claimAlarm, isAlarmTime } from "../lifecycle/alarms";
import type { Claims } from "../lifecycle/capability";
import { DokitError, errorMessage } from "../lifecycle/errors";
import { publishJob } from "./events";
import { type Adoption, type JobRow, type JobTable, reportAdoption } from "./job-table";
import { backoffMs, type RetryOptions } from "./retry";
import type { JobErrorCode } from "./errors";

// Runs a JobTable's due jobs on the object's one alarm (through claimAlarm, so
// the host's own alarm keeps working). At least once: rows are deleted only
// after their callback returned, and a deadman alarm is armed before a job
// starts, so a run cut short by an eviction or a crash runs again when it fires.
// The table is where the next due time lives: the alarm reads it from there
// (one index seek, once per instance) rather than storing it again, and
// `rearm` reports every change that can move it.

/** What the owning capability decides about its jobs. */
export interface JobHandler {
  /** Runs the job's callback (in the object's context: the alarm entry point provides it). */
  run(row: JobRow): unknown;
  /** @returns when a recurring job runs next after its run at `row.due` (success or final failure), or `null` for a one-shot job */
  next(row: JobRow, now: number): number | null;
  /** @returns the job's retry policy */
  retry(row: JobRow): Required<RetryOptions>;
  /** Whether a one-shot job that failed its last attempt is kept (listed, never run again) rather than deleted. */
  readonly keepFailed: boolean;
  /** Called once a job failed its last attempt. */
  onError?(error: unknown, row: JobRow): unknown;
  /** Whether a drain marks that it runs, so the next one counts a job its instance died in (default true). */
  readonly countsCutShort?: boolean;
  /** The prefix of the owner's job events (`"schedule"` → `schedule:create`, …); `""` publishes none. */
  readonly events: string;
}

/** One alarm run stops after this long and continues in a fresh alarm invocation. */
const RUN_BUDGET_MS = 10_000;

/** The longest `hungTimeoutSeconds` accepted: one day (a run never lasts that long; the deadman must stay armable). */
const MAX_HUNG_TIMEOUT_SECONDS = 86_400;

/**
 * @param seconds - the capability's `hungTimeoutSeconds` option (default 30)
 * @returns it in ms
 * @throws DokitError INVALID_ARGUMENT unless it is a finite number of seconds above 0 and at most a day
 */
export function resolveHungMs(owner: string, seconds: number | undefined = 30): number {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_HUNG_TIMEOUT_SECONDS) {
    throw new DokitError<JobErrorCode>("INVALID_ARGUMENT", `${owner}: hungTimeoutSeconds must be a number of seconds above 0 and at most ${MAX_HUNG_TIMEOUT_SECONDS}, got ${String(seconds)}`);
  }
  return seconds * 1000;
}

/** Drives one JobTable from its claimed alarm key. */
export class JobRunner {
  readonly #table: JobTable;
  readonly #handler: JobHandler;
  readonly #owner: string;
  readonly #hungMs: number;
  #work: AlarmWork | undefined;
  /** The time the alarm key is scheduled for, as far as this instance knows (`undefined`: unknown, e.g. after a wake). */
  #armedAt: number | undefined;
  #draining = false;
  /** Where events go (agents:schedule): set by attach(). */
  #claims: Claims | undefined;

  /**
   * @param hungMs - how long a run may take before the deadman alarm runs its job again
   */
  constructor(table: JobTable, handler: JobHandler, owner: string, hungMs: number) {
    this.#table = table;
    this.#handler = handler;
    this.#owner = owner;
    this.#hungMs = hungMs;
  }

  /**
   * Claims the alarm key `key`; call from the capability's `attach()`.
   * @param afterDrain - work the alarm invocation awaits once due jobs were run (Tasks awaits the attempts its jobs started)
   */
  attach(claims: Claims, key: string, afterDrain?: () => Promise<void>): void {
    const hook = afterDrain ? async () => (await this.drain(), await afterDrain()) : () => this.drain();
    this.#work = claimAlarm(claims, key, hook, { due: () => this.#table.nextDue() });
    this.#claims = claims;
  }

  /**
   * Publishes a job event (`schedule:create`, `queue:retry`, …) through an installed Observability
   * (read when work runs, so `use()` order does not matter).
   */
  publish(kind: string, id: string, callback?: string, began?: number, attempt?: number, maxAttempts?: number, error?: unknown): void {
    const claims = this.#claims;
    // An owner without job events (Tasks publishes its own on agents:task).
    if (!this.#handler.events) return;
    const observer = claims?.dispatch.observer;
    if (observer) publishJob(observer, claims.lifecycle, this.#handler.events, { kind, id, callback, began, attempt, maxAttempts, error });
  }

  /**
   * Makes sure the alarm fires for the next due job after a change. `due` is the
   * time of a job just stored: nothing to do when the alarm is already set no later.
   */
  async rearm(due?: number): Promise<void> {
    // A drain in progress re-arms when it ends (and keeps its deadman until then).
    if (this.#draining) return;
    if (due !== undefined && this.#armedAt !== undefined && this.#armedAt <= due) return;
    await this.#arm(this.#next()?.due);
  }

  async #arm(at: number | undefined): Promise<void> {
    const work = this.#work;
    if (!work) return;
    if (at === undefined) {
      this.#armedAt = undefined;
      await work.cancel();
    } else {
      this.#armedAt = at;
      await work.schedule(at);
    }
  }

  /** Runs every due job, one at a time, then arms the alarm for the next one. */
  async drain(): Promise<void> {
    if (this.#draining) {
      // The alarm fired while this instance still runs jobs: keep a deadman for them.
      await this.#work?.schedule(Date.now() + this.#hungMs);
      return;
    }
    this.#draining = true;
    const table = this.#table;
    let deadman = 0;
    let marked = false;
    const started = Date.now();
    const stop = async (at: number | undefined) => {
      if (marked) table.clearRunning();
      this.#draining = false;
      await this.#arm(at);
    };
    try {
      for (;;) {
        const now = Date.now();
        if (now - started > RUN_BUDGET_MS) return await stop(now);
        // The deadman: if this instance dies while a job runs, the alarm fires again and the job reruns.
        // Armed before the first job is taken, and refreshed as the run goes on.
        if (now + this.#hungMs / 2 > deadman) {
          const next = this.#next();
          if (!next || next.due > now) return await stop(next?.due);
          if (!marked && this.#handler.countsCutShort !== false) {
            // The last run stopped mid-job: the job at the head is the one it was running.
            if (table.wasRunning() && (await this.#cutShort(next))) continue;
            table.markRunning();
            marked = true;
          }
          deadman = now + this.#hungMs;
          await this.#work?.schedule(deadman);
          this.#armedAt = deadman;
        }
        const row = table.takeDue(now);
        if (!row) return await stop(this.#next()?.due);
        try {
          await this.#runOne(row);
        } catch (error) {
          // Not the callback's failure (#runOne handles that) but the row's: it cannot be read
          // (say, a spec no code of ours wrote). Set it aside so the jobs behind it still run.
          this.#setAside(row, `cannot be run (${errorMessage(error)})`);
        }
      }
    } finally {
      this.#draining = false;
    }
  }

  /**
   * @returns the next job to run, after setting aside (failed, kept, logged) any at the head whose
   * time the alarm cannot be set to: one such row never keeps the alarm from running the others.
   * Such times are refused before they are stored; this guards rows written by other code.
   */
  #next(): JobRow | undefined {
    for (;;) {
      const next = this.#table.next();
      if (!next || isAlarmTime(next.due)) return next;
      this.#setAside(next, `is due at ${next.due}, a time the alarm cannot be set to`);
    }
  }

  /** Keeps a row that cannot run as failed (listed, never run again), with the reason, and logs it. */
  #setAside(row: JobRow, reason: string): void {
    const message = `${this.#owner}: job "${row.id}" (${row.callback}) ${reason}; it was set aside and never runs`;
    console.error(`dokit: ${message}`);
    this.#table.keepFailed(row, message, row.attempts);
  }

  /**
   * Counts the attempt a stopped instance cut short.
   * @returns true when that was the job's last attempt (it went to onError instead of running again)
   */
  async #cutShort(next: JobRow): Promise<boolean> {
    const row = this.#table.countCutShort(next);
    this.#table.clearRunning();
    if (row.attempts < this.#handler.retry(row).maxAttempts) return false;
    const error = new DokitError<JobErrorCode>("JOB_INTERRUPTED", `${this.#owner}: job "${row.id}" (${row.callback}) was cut short ${row.attempts} times`);
    await this.#failedFinally(row, error, error.message, row.attempts);
    return true;
  }

  async #runOne(row: JobRow): Promise<void> {
    const handler = this.#handler;
    const attempts = row.attempts + 1;
    // Timed only while someone listens on agents:schedule.
    const began = this.#claims?.dispatch.observer?.since("schedule");
    try {
      await handler.run(row);
    } catch (error) {
      const retry = handler.retry(row);
      const message = errorMessage(error);
      if (attempts < retry.maxAttempts) {
        this.#table.retryAt(row, Date.now() + backoffMs(attempts, retry), message);
        if (began) this.publish("retry", row.id, row.callback, began, attempts, retry.maxAttempts, error);
        return;
      }
      await this.#failedFinally(row, error, message, attempts, began);
      return;
    }
    this.#table.finish(row, handler.next(row, Date.now()));
    if (began) this.publish("execute", row.id, row.callback, began, attempts);
  }

  async #failedFinally(row: JobRow, error: unknown, message: string, attempts: number, began?: number): Promise<void> {
    const handler = this.#handler;
    this.publish("error", row.id, row.callback, began, attempts, undefined, error);
    const next = handler.next(row, Date.now());
    if (next !== null) this.#table.finish(row, next);
    else if (handler.keepFailed) this.#table.keepFailed(row, message, attempts);
    else this.#table.finish(row, null);
    if (!handler.onError) {
      console.error(`dokit: ${this.#owner} job "${row.id}" (${row.callback}) failed its last attempt`, error);
      return;
    }
    try {
      await handler.onError(error, { ...row, attempts });
    } catch (hookError) {
      console.error(`dokit: ${this.#owner}'s onError failed`, hookError);
    }
  }
}

/**
 * Adopts the reference implementation's rows on every start; a reference table that
 * cannot be read is logged and never keeps the object from starting.
 * @param adopt - moves the reference's rows into this capability's table
 */
export function adoptOnStart(claims: Claims, owner: string, runner: JobRunner, adopt: () => Adoption): void {
  claims.onStart(async () => {
    let adoption: Adoption;
    try {
      adoption = adopt();
    } catch (error) {
      console.error(`dokit: ${owner} could not adopt the reference's rows`, error);
      return;
    }
    reportAdoption(owner, adoption);
    if (adoption.adopted > 0) await runner.rearm();
  });
}
