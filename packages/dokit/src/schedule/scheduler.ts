import type { Capability, Claims } from "../lifecycle/capability";
import { DokitError } from "../lifecycle/errors";
import { isAlarmTime, LATEST_ALARM_TIME } from "../lifecycle/alarms";
import { adoptOnStart, JobRunner, resolveHungMs } from "../jobs/job-runner";
import { checkJobId, type JobRow, JobTable, parsePayload, serializePayload } from "../jobs/job-table";
import { DEFAULT_RETRY, resolveRetry, type RetryOptions } from "../jobs/retry";
import { adoptReferenceSchedules } from "./adopt";
import { nextCronRun } from "./cron";
import type {
  Schedule,
  ScheduleCriteria,
  ScheduleOptions,
  SchedulerCallbacks,
  SchedulerHandlers,
  SchedulerOptions,
  SchedulerPayload,
  ScheduleSpec,
} from "./types";
import type { ScheduleErrorCode } from "./errors";

const TABLE = "dokit_schedules";
const ALARM_KEY = "schedule";
const OWNER = "Scheduler";

type Spec = ScheduleSpec;

/**
 * Durable timed work on the object's one alarm: one-shots at a date or after a
 * delay, cron expressions and fixed intervals, each running a named callback
 * in the object's context. Install with `Lifecycle.install(this).use(scheduler)`.
 */
export class Scheduler<Handlers extends SchedulerHandlers = SchedulerCallbacks> implements Capability {
  readonly capabilityName = OWNER;
  readonly #callbacks: Record<string, (payload: unknown, schedule: Schedule<unknown>) => unknown>;
  readonly #options: SchedulerOptions<Handlers>;
  readonly #retry: Required<RetryOptions>;
  readonly #hungMs: number;
  #table: JobTable | undefined;
  #runner: JobRunner | undefined;

  /**
   * @param options - the named callbacks, the default retry policy, `onError`, `keepFailed`
   * @throws DokitError INVALID_RETRY for a bad default retry policy, INVALID_ARGUMENT for a bad `hungTimeoutSeconds`
   */
  constructor(options: SchedulerOptions<Handlers> = {}) {
    this.#options = options;
    this.#retry = resolveRetry(OWNER, options.retry, DEFAULT_RETRY);
    this.#hungMs = resolveHungMs(OWNER, options.hungTimeoutSeconds);
    // SAFETY: a registered callback receives the payload it was scheduled with (checked where set/every are typed).
    this.#callbacks = Object.assign(Object.create(null), options.callbacks) as Record<string, (payload: unknown, schedule: Schedule<unknown>) => unknown>;
  }

  attach(claims: Claims): void {
    const table = new JobTable(claims.lifecycle.ctx, TABLE, "due", OWNER, true);
    const runner = new JobRunner(
      table,
      {
        run: (row) => this.#run(row),
        next: (row, now) => nextDue(parseSpec(row), row.due, now),
        retry: (row) => (parseSpec(row).retry ? resolveRetry(OWNER, parseSpec(row).retry, this.#retry) : this.#retry),
        keepFailed: this.#options.keepFailed === true,
        onError: this.#options.onError ? (error, row) => this.#options.onError?.(error, toSchedule(row)) : undefined,
        events: "schedule",
      },
      OWNER,
      this.#hungMs,
    );
    runner.attach(claims, ALARM_KEY);
    // The reference's schedules (cf_agents_schedules, cf_agents_jobs) become ours on start.
    const ctx = claims.lifecycle.ctx;
    adoptOnStart(claims, OWNER, runner, () => adoptReferenceSchedules(ctx, table, (name) => Object.hasOwn(this.#callbacks, name)));
    this.#table = table;
    this.#runner = runner;
  }

  /**
   * Schedules a callback once at a date, once after a delay, or at every match of a cron expression.
   * @param when - a `Date`, a delay in seconds, or a 5-field cron expression
   * @param callback - the name of a registered callback
   * @param payload - what the callback receives (JSON-serializable)
   * @param options - a stable `id`, `retry`, `idempotent`, a cron `timeZone`
   * @returns the stored schedule
   * @throws DokitError UNKNOWN_CALLBACK, INVALID_SCHEDULE (a past date, a negative delay, a time after the latest alarm time
   * (2262-04-11), an invalid cron expression or time zone), INVALID_PAYLOAD (not JSON, or too large), INVALID_RETRY,
   * INVALID_ARGUMENT (the id); nothing is stored then
   */
  async set<Name extends keyof Handlers & string>(
    when: Date | string | number,
    callback: Name,
    payload?: SchedulerPayload<Handlers[Name]>,
    options: ScheduleOptions = {},
  ): Promise<Schedule<SchedulerPayload<Handlers[Name]>>> {
    const now = Date.now();
    let spec: Spec;
    let due: number;
    if (when instanceof Date) {
      due = when.getTime();
      if (Number.isNaN(due)) throw new DokitError<ScheduleErrorCode>("INVALID_SCHEDULE", `${OWNER}: the date is invalid`);
      if (due < now) throw new DokitError<ScheduleErrorCode>("INVALID_SCHEDULE", `${OWNER}: the date ${when.toISOString()} is in the past`);
      spec = { type: "scheduled" };
    } else if (typeof when === "number") {
      if (!Number.isFinite(when) || when < 0) {
        throw new DokitError<ScheduleErrorCode>("INVALID_SCHEDULE", `${OWNER}: a delay must be a finite number of seconds of at least 0, got ${when}`);
      }
      due = now + when * 1000;
      spec = { type: "delayed", delayInSeconds: when };
    } else if (typeof when === "string") {
      due = nextCronRun(when, now, options.timeZone);
      spec = { type: "cron", cron: when, ...(options.timeZone !== undefined ? { timeZone: options.timeZone } : {}) };
    } else {
      throw new DokitError<ScheduleErrorCode>("INVALID_SCHEDULE", `${OWNER}: when must be a Date, a delay in seconds or a cron expression`);
    }
    return this.#store(due, spec, callback, payload, options, spec.type === "cron");
  }

  /**
   * Schedules a callback every `intervalSeconds`, first after one interval. Runs never
   * drift: each next run is computed from the previous due time, not from when it ran.
   * @param intervalSeconds - seconds between runs (more than 0)
   * @returns the stored schedule
   * @throws DokitError as {@link set} does
   */
  async every<Name extends keyof Handlers & string>(
    intervalSeconds: number,
    callback: Name,
    payload?: SchedulerPayload<Handlers[Name]>,
    options: ScheduleOptions = {},
  ): Promise<Schedule<SchedulerPayload<Handlers[Name]>>> {
    if (typeof intervalSeconds !== "number" || !Number.isFinite(intervalSeconds) || intervalSeconds <= 0) {
      throw new DokitError<ScheduleErrorCode>("INVALID_SCHEDULE", `${OWNER}: an interval must be a finite number of seconds above 0, got ${String(intervalSeconds)}`);
    }
    const due = Date.now() + intervalSeconds * 1000;
    return this.#store(due, { type: "interval", intervalSeconds, anchor: due }, callback, payload, options, true);
  }

  /** @returns the schedule with `id` */
  async get(id: string): Promise<Schedule<unknown> | undefined> {
    const row = this.#tableOf().get(id);
    return row && toSchedule(row);
  }

  /**
   * @param criteria - an id, a kind, a range of next-run times
   * @returns matching schedules, the next to run first (failed-and-kept ones last)
   */
  async list(criteria: ScheduleCriteria = {}): Promise<Schedule<unknown>[]> {
    const where: string[] = ["1"];
    const params: SqlStorageValue[] = [];
    const add = (condition: string, value: SqlStorageValue) => {
      where.push(condition);
      params.push(value);
    };
    if (criteria.id !== undefined) add("id = ?", criteria.id);
    if (criteria.timeRange?.start) add("due >= ?", criteria.timeRange.start.getTime());
    if (criteria.timeRange?.end) add("due <= ?", criteria.timeRange.end.getTime());
    const rows = this.#tableOf().select(where.join(" AND "), ...params).map(toSchedule);
    return criteria.type ? rows.filter((s) => s.type === criteria.type) : rows;
  }

  /**
   * Cancels a schedule (a run in progress finishes; a recurring one does not run again).
   * @returns whether a schedule was cancelled
   */
  async cancel(id: string): Promise<boolean> {
    const deleted = this.#tableOf().delete("id = ?", id) > 0;
    if (deleted) await this.#runner?.rearm();
    if (deleted) this.#runner?.publish("cancel", id);
    return deleted;
  }

  // ------------------------------------------------------------------ internals

  async #store<P>(due: number, spec: Spec, callback: string, payload: P | undefined, options: ScheduleOptions, recurring: boolean): Promise<Schedule<P>> {
    if (!isAlarmTime(due)) {
      const latest = new Date(LATEST_ALARM_TIME).toISOString();
      throw new DokitError<ScheduleErrorCode>("INVALID_SCHEDULE", `${OWNER}: the first run (${due} ms since the epoch) is after the latest time an alarm can be set, ${latest}`);
    }
    if (!Object.hasOwn(this.#callbacks, callback) || typeof this.#callbacks[callback] !== "function") {
      throw new DokitError<ScheduleErrorCode>("UNKNOWN_CALLBACK", `${OWNER}: no callback named "${String(callback)}" is registered in new Scheduler({ callbacks })`);
    }
    const json = serializePayload(payload, OWNER);
    if (options.retry !== undefined) {
      resolveRetry(OWNER, options.retry, this.#retry);
      spec.retry = options.retry;
    }
    const id = options.id === undefined ? undefined : checkJobId(options.id, OWNER);
    const table = this.#tableOf();
    const specJson = JSON.stringify(spec);
    if (options.idempotent ?? recurring) {
      // The same schedule again (by id, or by content without one) is kept as it is: a
      // recurring one set on every start keeps its next run and its grid.
      const key = timingKey(spec, due);
      const isSame = (row: JobRow) => row.callback === callback && row.payload === json && row.failed === 0 && timingKey(parseSpec(row), row.due) === key;
      const same = id === undefined ? table.byCallback(callback).find(isSame) : table.get(id);
      // SAFETY: the row was stored with this callback's payload type.
      if (same && isSame(same)) return toSchedule(same) as Schedule<P>;
    }
    const row = table.upsert({ id: id ?? crypto.randomUUID(), callback, payload: json, due, spec: specJson, created: Date.now() });
    // A replaced job may have moved later: then the alarm is recomputed, not just brought forward.
    await this.#runner?.rearm(row.rev > 0 ? undefined : due);
    this.#runner?.publish("create", row.id, callback);
    // SAFETY: the row was stored from `payload`.
    return toSchedule(row) as Schedule<P>;
  }

  async #run(row: JobRow): Promise<void> {
    const callback = this.#callbacks[row.callback];
    if (!callback) throw new DokitError<ScheduleErrorCode>("UNKNOWN_CALLBACK", `${OWNER}: no callback named "${row.callback}" is registered (schedule ${row.id})`);
    await callback(parsePayload(row.payload), toSchedule(row));
  }

  #tableOf(): JobTable {
    if (!this.#table) {
      throw new DokitError<ScheduleErrorCode>("NOT_INSTALLED", `${OWNER} is not installed: add it with Lifecycle.install(this).use(scheduler)`);
    }
    return this.#table;
  }
}

/** @returns what makes two schedules the same for `idempotent`: kind, timing, retry (and the time of a one-shot) */
function timingKey(s: Spec, due: number): string {
  const oneShot = s.type === "scheduled" || s.type === "delayed";
  return JSON.stringify([s.type, s.cron, s.timeZone, s.intervalSeconds, s.retry, oneShot ? due : null]);
}

function parseSpec(row: JobRow): Spec {
  // SAFETY: written by #store from a Spec.
  return JSON.parse(row.spec) as Spec;
}

/**
 * When a schedule runs next after its run due at `due`, seen at `now`: never
 * for a one-shot; a recurring schedule skips the slots it missed (one run after
 * downtime, not one per missed slot), an interval stays on its grid (even after retries).
 */
function nextDue(s: Spec, due: number, now: number): number | null {
  if (s.type === "interval" && s.intervalSeconds) {
    const step = s.intervalSeconds * 1000;
    const anchor = s.anchor ?? due;
    return anchor + (Math.floor(Math.max(0, Math.max(now, due) - anchor) / step) + 1) * step;
  }
  if (s.type === "cron" && s.cron) return nextCronRun(s.cron, Math.max(due, now), s.timeZone);
  return null;
}

/** @returns the reference-shaped view of a row */
function toSchedule(row: JobRow): Schedule<unknown> {
  const s = parseSpec(row);
  const base = {
    id: row.id,
    callback: row.callback,
    payload: parsePayload(row.payload),
    time: Math.floor(row.due / 1000),
    ...(s.retry ? { retry: s.retry } : {}),
    ...(row.failed ? { failed: { error: row.error ?? "", attempts: row.attempts } } : {}),
  };
  switch (s.type) {
    case "delayed":
      return { ...base, type: "delayed", delayInSeconds: s.delayInSeconds ?? 0 };
    case "cron":
      return { ...base, type: "cron", cron: s.cron ?? "", ...(s.timeZone !== undefined ? { timeZone: s.timeZone } : {}) };
    case "interval":
      return { ...base, type: "interval", intervalSeconds: s.intervalSeconds ?? 0 };
    default:
      return { ...base, type: "scheduled" };
  }
}
