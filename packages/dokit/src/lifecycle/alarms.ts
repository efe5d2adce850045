import type { AlarmHook, Claims } from "./capability";
import { claimKey, type Owned } from "./dispatch";
import { DokitError } from "./errors";
import type { LifecycleErrorCode } from "./errors";
import type { Lifecycle } from "./lifecycle";

// The platform keeps ONE alarm per object. dokit shares it with the host by
// this rule: capabilities schedule keyed work claimed with `claimAlarm`;
// when that work is earlier than an alarm the host set itself, the host's
// time is remembered and re-armed after dokit's work runs, so the host's
// alarm is never lost or moved. The host's `onAlarm` runs only when its own
// alarm is due (an alarm dokit did not schedule counts as the host's).
//
// To keep that promise for a host `setAlarm` made at any moment (also one
// later than pending work, which would otherwise replace dokit's earlier
// alarm), the first claim routes this object's `ctx.storage.setAlarm` through
// the shared schedule: an own property on this one instance's storage object,
// nothing global, no prototype touched. `getAlarm` and `deleteAlarm` stay the
// platform's (they see and clear the next alarm, dokit's or the host's), so
// tools that drive the alarm, such as the test pool's runDurableObjectAlarm,
// keep working.
//
// This module is imported only by capabilities that schedule work: an object
// whose capabilities never claim an alarm neither carries this code nor pays
// a storage read when its own alarm fires.

const KEY = "__dokit_alarms";

/**
 * The latest alarm time the runtime accepts, in ms since the epoch (2262-04-11T23:47:16.854Z):
 * it keeps times as signed 64-bit nanoseconds and refuses a later one with a TypeError
 * ("This API doesn't support dates after 2189"), and as far before the epoch.
 */
export const LATEST_ALARM_TIME = 9_223_372_036_854;

/** @returns whether the platform alarm can be set to `at` (ms since the epoch) */
export function isAlarmTime(at: unknown): at is number {
  return typeof at === "number" && Number.isFinite(at) && Math.abs(at) <= LATEST_ALARM_TIME;
}

/**
 * @returns `at` when the platform alarm can be set to it
 * @throws DokitError INVALID_ARGUMENT otherwise (nothing is stored then)
 */
function checkAlarmTime(at: unknown, what: string): number {
  if (isAlarmTime(at)) return at;
  throw new DokitError<LifecycleErrorCode>(
    "INVALID_ARGUMENT",
    `${what}: ${String(at)} is not an alarm time (ms since the epoch, at most ${LATEST_ALARM_TIME}, ${new Date(LATEST_ALARM_TIME).toISOString()})`,
  );
}

type Schedule = { work: Record<string, number>; host?: number };

/** One capability's keyed alarm work, returned by {@link claimAlarm}. */
export interface AlarmWork {
  /** Runs the hook at `at` (ms since epoch); replaces an earlier schedule of the same key. */
  schedule(at: number): Promise<void>;
  /** Cancels the pending run, if any. */
  cancel(): Promise<void>;
  /** @returns when the pending run is due (ms since epoch), or `undefined` when none is */
  due(): Promise<number | undefined>;
}

const perLifecycle = new WeakMap<Lifecycle, Alarms>();

/**
 * Claims alarm work under `key` for the capability being attached. Call it in
 * `attach()` on every start (the claim is how a woken object finds the hook).
 * @throws DokitError DUPLICATE_CLAIM when another capability claimed `key`, RESERVED_NAME for reserved keys
 * @returns `schedule(at)` and `cancel()` for this key
 */
export function claimAlarm(claims: Claims, key: string, hook: AlarmHook): AlarmWork {
  const alarms = perLifecycle.get(claims.lifecycle) ?? installAlarms(claims);
  claimKey("alarm key", alarms.hooks, key, claims.owner, hook);
  return { schedule: (at) => alarms.schedule(key, at), cancel: () => alarms.cancel(key), due: () => alarms.due(key) };
}

/** The first claim on a lifecycle creates its Alarms and takes the alarm entry point for it. */
function installAlarms(claims: Claims): Alarms {
  const storage = claims.lifecycle.ctx.storage;
  // The platform's own setAlarm (from the prototype: a second lifecycle on the same storage must not bind the routed one).
  const platformSet = (Object.getPrototypeOf(storage) as DurableObjectStorage).setAlarm.bind(storage);
  const alarms = new Alarms(storage, platformSet);
  perLifecycle.set(claims.lifecycle, alarms);
  claims.takeAlarm((now, runHost) => alarms.run(now, runHost));
  storage.setAlarm = async (time) => alarms.hostSet(checkAlarmTime(time instanceof Date ? time.getTime() : time, "setAlarm"));
  return alarms;
}

class Alarms {
  readonly #storage: DurableObjectStorage;
  readonly #setAlarm: (at: number) => Promise<void>;
  /** Claimed work by key (a null-prototype table, like the dispatch table's). */
  readonly hooks: Record<string, Owned<AlarmHook>> = Object.create(null);
  /** Set when the host sets its alarm during a run: the time remembered at the run's start is then stale. */
  #hostChanged = false;
  /**
   * The keys whose hooks the current alarm run is running, each with what its hook asked for since
   * (a time; `null`: cancelled; `undefined`: nothing yet). While a hook runs, its key keeps its due
   * time in storage, so an instance lost mid-hook runs it again; what the hook asks for is kept here
   * (and on the platform alarm) and written once when the run ends. A run that settles its work
   * within the invocation writes the schedule once, not three times (due, deadman, done).
   */
  readonly #running = new Map<string, number | null | undefined>();

  constructor(storage: DurableObjectStorage, setAlarm: (at: number) => Promise<void>) {
    this.#storage = storage;
    this.#setAlarm = setAlarm;
  }

  /**
   * Changes of the schedule run one after another, in call order: each reads the stored schedule,
   * awaits, and writes it back, so two interleaved (a run's re-arm and a new job's schedule) would
   * lose one's change.
   */
  #tail: Promise<unknown> = Promise.resolve();
  #serial<T>(change: () => Promise<T>): Promise<T> {
    const done = this.#tail.then(change);
    this.#tail = done.catch(() => {});
    return done;
  }

  /** The host's `ctx.storage.setAlarm(at)`. */
  hostSet(at: number): Promise<void> {
    this.#hostChanged = true;
    return this.#serial(async () => {
      const schedule = await this.#load();
      // No dokit work pending: the platform alarm is simply the host's.
      if (isIdle(this.#effective(schedule))) return this.#setAlarm(at);
      schedule.host = at;
      await this.#arm(schedule);
    });
  }

  schedule(key: string, at: number): Promise<void> {
    checkAlarmTime(at, `alarm work "${key}"`);
    return this.#serial(async () => {
      const schedule = await this.#load();
      await this.#noteHostAlarm(schedule);
      if (this.#running.has(key)) this.#running.set(key, at);
      else schedule.work[key] = at;
      await this.#arm(schedule);
    });
  }

  cancel(key: string): Promise<void> {
    return this.#serial(async () => {
      const schedule = await this.#load();
      const running = this.#running.has(key);
      if (running ? this.#running.get(key) === null : !(key in schedule.work)) return;
      await this.#noteHostAlarm(schedule);
      if (running) this.#running.set(key, null);
      else delete schedule.work[key];
      await this.#arm(schedule);
    });
  }

  /** @returns when `key`'s pending run is due (what its running hook asked for, while it runs) */
  async due(key: string): Promise<number | undefined> {
    return this.#effective(await this.#load()).work[key];
  }

  /**
   * Runs due work, then the host's hook when its alarm is due. Hooks (and the
   * host) may schedule again while they run, so the schedule is read back
   * before the alarm is re-armed.
   */
  async run(now: number, runHost: () => Promise<void>): Promise<void> {
    this.#hostChanged = false;
    const { schedule, due, hostDue } = await this.#serial(async () => {
      const schedule = await this.#load();
      const due = Object.keys(schedule.work).filter((key) => (schedule.work[key] as number) <= now);
      // The firing is the host's when its time has come, or when it is the earliest
      // time pending (an alarm run early, as the test pool's runDurableObjectAlarm does).
      const host = schedule.host;
      const hostDue = due.length === 0 ? host === undefined || host <= Math.min(...Object.values(schedule.work)) : host !== undefined && host <= now;
      // The due keys stay stored while their hooks run (see #running).
      for (const key of due) this.#running.set(key, undefined);
      if (hostDue) {
        delete schedule.host;
        await this.#save(schedule);
      }
      return { schedule, due, hostDue };
    });
    try {
      for (const key of due) {
        const claimed = this.hooks[key];
        try {
          await claimed?.value();
        } catch (error) {
          console.error(`dokit: alarm work "${key}" of ${claimed?.owner} failed`, error);
        }
      }
      if (hostDue) await runHost();
    } catch (error) {
      // The host's onAlarm threw: keep what the hooks asked for; the platform retries the alarm.
      await this.#serial(async () => this.#save(await this.#endRun()));
      throw error;
    }
    await this.#serial(async () => {
      const after = await this.#endRun();
      // #save drops the stored schedule when no work is pending: keep the host's time from memory.
      if (schedule.host !== undefined && !this.#hostChanged) after.host ??= schedule.host;
      await this.#noteHostAlarm(after);
      await this.#arm(after);
    });
  }

  /** @returns the stored schedule with what the hooks of the run asked for in place of their due times (not yet written) */
  async #endRun(): Promise<Schedule> {
    const after = this.#effective(await this.#load());
    this.#running.clear();
    return after;
  }

  /**
   * @returns the schedule as it stands for arming: a running hook's key at the time it asked for
   * (absent when it asked for none, or nothing yet: its stored due time has been reached)
   */
  #effective(schedule: Schedule): Schedule {
    if (this.#running.size === 0) return schedule;
    const work = { ...schedule.work };
    for (const [key, at] of this.#running) {
      if (typeof at === "number") work[key] = at;
      else delete work[key];
    }
    return { ...schedule, work };
  }

  /** @returns the stored schedule: each key's next run, and the host's own alarm */
  load(): Promise<Schedule> {
    return this.#load();
  }

  async #load(): Promise<Schedule> {
    const schedule = (await this.#storage.get<Schedule>(KEY)) ?? { work: {} };
    this.#stored = stored(schedule);
    return schedule;
  }

  async #save(schedule: Schedule): Promise<void> {
    // What storage holds already is not written again (a run that changed nothing writes no row).
    const next = stored(schedule);
    if (next === this.#stored) return;
    this.#stored = next;
    // With no dokit work pending, the platform alarm is simply the host's.
    if (next === "") await this.#storage.delete(KEY);
    else await this.#storage.put(KEY, schedule);
  }

  /** The stored schedule as last read or written by this instance ("" for none). */
  #stored: string | undefined;

  /**
   * Remembers an alarm the host set itself: any alarm time dokit did not schedule, and no later than
   * all stored work (the alarm is armed at the earliest pending time, so one later than stored work is
   * a running hook's, such as the job runner's deadman, seen by an instance that replaced the one running it).
   */
  async #noteHostAlarm(schedule: Schedule): Promise<void> {
    const current = await this.#storage.getAlarm();
    if (current === null) return;
    const times = [...Object.values(schedule.work), ...Object.values(this.#effective(schedule).work)];
    if (!times.includes(current) && !Object.values(schedule.work).some((at) => at < current)) schedule.host = current;
  }

  async #arm(schedule: Schedule): Promise<void> {
    dropUnarmable(schedule);
    await this.#save(schedule);
    const times = Object.values(this.#effective(schedule).work);
    if (schedule.host !== undefined) times.push(schedule.host);
    if (times.length === 0) {
      // Nothing left (#noteHostAlarm kept any alarm of the host's): drop dokit's stale time,
      // or it would fire with nothing due and reach the host's onAlarm as if it were its own.
      if ((await this.#storage.getAlarm()) !== null) await this.#storage.deleteAlarm();
      return;
    }
    const next = Math.min(...times);
    if ((await this.#storage.getAlarm()) !== next) await this.#setAlarm(next);
  }
}

/**
 * Drops (and logs) a stored time the platform alarm cannot be set to, so one bad entry
 * never keeps the alarm from being armed for the others. Such times are refused before
 * they are stored; this guards a schedule written by other code.
 */
function dropUnarmable(schedule: Schedule): void {
  const { work, host } = schedule;
  for (const [key, at] of Object.entries(host === undefined ? work : { ...work, "(the host's)": host })) {
    if (isAlarmTime(at)) continue;
    console.error(`dokit: dropped alarm work "${key}": ${at} is not an alarm time`);
    if (key in work) delete work[key];
    else delete schedule.host;
  }
}

const isIdle = (schedule: Schedule): boolean => Object.keys(schedule.work).length === 0;

/** @returns what storage holds for `schedule`: its JSON, or "" when it is not stored (no work pending) */
const stored = (schedule: Schedule): string => (isIdle(schedule) ? "" : JSON.stringify(schedule));
