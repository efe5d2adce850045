import type { AlarmHook, Claims } from "./capability";
import { claimKey, type Owned } from "./dispatch";
import { DokitError } from "./errors";
import type { LifecycleErrorCode } from "./errors";
import { installedClasses } from "./entry-points";
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
// Work whose due time its claimant keeps in storage of its own (the job
// engine's tables: Scheduler, Queue, Tasks) is claimed with a `due` reader:
// its time is not written to the shared schedule but read from the claimant
// (once per instance and at each firing, otherwise taken from its schedule and
// cancel calls), so starting and settling such work writes nothing here. One
// exception keeps the host's alarm safe: for a host that handles alarms of its
// own (`onAlarm`, or its own `alarm()` delegating to the lifecycle's), those
// times are stored too, because the stored times are how a later instance
// tells an alarm dokit armed (say, a deadman left by an evicted run) from the
// host's own. Any other host's alarm has no handler: nothing to tell apart.
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

/** How a claim's work is kept. */
export interface AlarmClaimOptions {
  /**
   * Reads when the key's work is next due from the claimant's own storage (`undefined`: none
   * pending), synchronously and cheaply (say, one index seek). With it the time is not written
   * to the shared schedule: it is read once per instance, then taken from `schedule(at)` and
   * `cancel()`, which the claimant must call after every change of its storage that moves the
   * time earlier. For a host that handles alarms itself (`onAlarm`, or a delegated `alarm()`)
   * the time is stored as well, so its own alarm stays told apart from dokit's.
   */
  due?: () => number | undefined;
}

const perLifecycle = new WeakMap<Lifecycle, Alarms>();

/**
 * Claims alarm work under `key` for the capability being attached. Call it in
 * `attach()` on every start (the claim is how a woken object finds the hook).
 * @param options - `due`: the work's time is read from the claimant's own storage instead of stored
 * @throws DokitError DUPLICATE_CLAIM when another capability claimed `key`, RESERVED_NAME for reserved keys
 * @returns `schedule(at)` and `cancel()` for this key
 */
export function claimAlarm(claims: Claims, key: string, hook: AlarmHook, options: AlarmClaimOptions = {}): AlarmWork {
  const alarms = perLifecycle.get(claims.lifecycle) ?? installAlarms(claims);
  claimKey("alarm key", alarms.hooks, key, claims.owner, hook);
  if (options.due) alarms.sources.set(key, options.due);
  return { schedule: (at) => alarms.schedule(key, at), cancel: () => alarms.cancel(key), due: () => alarms.due(key) };
}

/** @returns whether the host can receive an alarm of its own: it has an `onAlarm`, or an `alarm()` of its own (installed with `delegates: ["alarm"]`) */
function handlesAlarms(host: object): boolean {
  if (typeof (host as { onAlarm?: unknown }).onAlarm === "function") return true;
  return installedClasses.get(host.constructor)?.delegates.split(",").includes("alarm") ?? true;
}

/** The first claim on a lifecycle creates its Alarms and takes the alarm entry point for it. */
function installAlarms(claims: Claims): Alarms {
  const storage = claims.lifecycle.ctx.storage;
  // The platform's own setAlarm (from the prototype: a second lifecycle on the same storage must not bind the routed one).
  const platformSet = (Object.getPrototypeOf(storage) as DurableObjectStorage).setAlarm.bind(storage);
  const alarms = new Alarms(storage, platformSet, claims.lifecycle.host);
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
  /** The keys claimed with a `due` reader, with it. */
  readonly sources = new Map<string, () => number | undefined>();
  /**
   * Those keys' times as this instance knows them, when they are not stored (see {@link #unstored}):
   * read from the claimant once, then as it schedules and cancels (`null`: none pending).
   */
  readonly #known = new Map<string, number | null>();
  /** The keys with a reader this instance has looked up while they are stored (see {@link #fill}). */
  readonly #checked = new Set<string>();
  readonly #host: object;
  #hostAlarms: boolean | undefined;
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

  constructor(storage: DurableObjectStorage, setAlarm: (at: number) => Promise<void>, host: object) {
    this.#storage = storage;
    this.#setAlarm = setAlarm;
    this.#host = host;
  }

  /** Whether the host handles alarms of its own: then every time is stored, so its alarm is told from dokit's. Read when first needed (the host is built by then). */
  get #keepsHost(): boolean {
    return (this.#hostAlarms ??= handlesAlarms(this.#host));
  }

  /** @returns whether `key`'s time lives in its claimant's storage and this instance's memory only */
  #unstored(key: string): boolean {
    return this.sources.has(key) && !this.#keepsHost;
  }

  /** @returns what `key`'s reader says (`null`: nothing pending; a time the alarm cannot be set to: now, so its hook runs and deals with it) */
  #read(key: string): number | null {
    const at = this.sources.get(key)?.();
    return at === undefined ? null : isAlarmTime(at) ? at : Date.now();
  }

  /**
   * Where every time is stored (a host that handles alarms): a key with a reader that the stored
   * schedule lacks is looked up once per instance, so work stored only in the claimant's table (as
   * it is for a host without alarms of its own, before a deployment gave it `onAlarm`) still runs.
   * Called after {@link #noteHostAlarm} (a table written just before its key is scheduled must not
   * count as work stored earlier); the caller writes the schedule when this returns true.
   * @returns whether it added a time to `schedule`
   */
  #fill(schedule: Schedule): boolean {
    if (!this.#keepsHost) return false;
    let added = false;
    for (const key of this.sources.keys()) {
      if (this.#checked.has(key)) continue;
      this.#checked.add(key);
      if (key in schedule.work || this.#running.has(key)) continue;
      const at = this.#read(key);
      if (at === null) continue;
      schedule.work[key] = at;
      added = true;
    }
    return added;
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
      // (An added time makes the schedule not idle: #arm writes it.)
      this.#fill(schedule);
      // No dokit work pending: the platform alarm is simply the host's.
      if (isIdle(this.#times(schedule))) return this.#setAlarm(at);
      schedule.host = at;
      await this.#arm(schedule);
    });
  }

  schedule(key: string, at: number): Promise<void> {
    checkAlarmTime(at, `alarm work "${key}"`);
    return this.#serial(async () => {
      const schedule = await this.#load();
      await this.#noteHostAlarm(schedule);
      this.#fill(schedule);
      if (this.#running.has(key)) this.#running.set(key, at);
      else if (this.#unstored(key)) this.#known.set(key, at);
      else schedule.work[key] = at;
      await this.#arm(schedule);
    });
  }

  cancel(key: string): Promise<void> {
    return this.#serial(async () => {
      const schedule = await this.#load();
      const running = this.#running.has(key);
      const unstored = !running && this.#unstored(key);
      if (running ? this.#running.get(key) === null : unstored ? this.#known.get(key) === null : !(key in schedule.work)) return;
      await this.#noteHostAlarm(schedule);
      this.#fill(schedule);
      if (running) this.#running.set(key, null);
      else if (unstored) this.#known.set(key, null);
      else delete schedule.work[key];
      await this.#arm(schedule);
    });
  }

  /** @returns when `key`'s pending run is due (what its running hook asked for, while it runs) */
  async due(key: string): Promise<number | undefined> {
    return this.#times(await this.#load())[key];
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
      const filled = this.#fill(schedule);
      // A firing reads the times kept in memory afresh from their claimants (one seek each): what
      // runs is what their tables hold now, whatever this instance was last told.
      for (const key of this.sources.keys()) if (this.#unstored(key)) this.#known.set(key, this.#read(key));
      const times = this.#times(schedule);
      const due = Object.keys(times).filter((key) => (times[key] as number) <= now);
      // The firing is the host's when its time has come, or when it is the earliest
      // time pending (an alarm run early, as the test pool's runDurableObjectAlarm does).
      const host = schedule.host;
      const hostDue = due.length === 0 ? host === undefined || host <= Math.min(...Object.values(times)) : host !== undefined && host <= now;
      // The due keys stay stored (or in their claimants' tables) while their hooks run (see #running).
      for (const key of due) this.#running.set(key, undefined);
      if (hostDue) delete schedule.host;
      if (hostDue || filled) await this.#save(schedule, true);
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
      await this.#serial(async () => {
        const after = await this.#endRun();
        await this.#save(after, !isIdle(this.#times(after)));
      });
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

  /**
   * @returns the stored schedule with what the hooks of the run asked for in place of their due
   * times (not yet written); a key kept in memory takes it there (asked nothing: read again)
   */
  async #endRun(): Promise<Schedule> {
    const schedule = await this.#load();
    for (const [key, at] of this.#running) {
      if (this.#unstored(key)) {
        if (at === undefined) this.#known.delete(key);
        else this.#known.set(key, at);
      } else if (typeof at === "number") schedule.work[key] = at;
      else delete schedule.work[key];
    }
    this.#running.clear();
    return schedule;
  }

  /**
   * @returns each key's pending time, as it stands for arming: stored, kept in memory (read from its
   * claimant when this instance does not know it yet), and a running hook's key at the time it asked
   * for (absent when it asked for none, or nothing yet: its due time has been reached)
   */
  #times(schedule: Schedule): Record<string, number> {
    const work = { ...schedule.work };
    for (const key of this.sources.keys()) {
      if (!this.#unstored(key) || this.#running.has(key)) continue;
      let at = this.#known.get(key);
      if (at === undefined) this.#known.set(key, (at = this.#read(key)));
      if (at !== null) work[key] = at;
    }
    for (const [key, at] of this.#running) {
      if (typeof at === "number") work[key] = at;
      else delete work[key];
    }
    return work;
  }

  async #load(): Promise<Schedule> {
    const schedule = (await this.#storage.get<Schedule>(KEY)) ?? { work: {} };
    this.#stored = stored(schedule, true);
    // A time stored for a key now kept in memory (by an earlier version or host) is dropped at the next write.
    if (!this.#keepsHost) for (const key of this.sources.keys()) delete schedule.work[key];
    return schedule;
  }

  /** @param pending - whether dokit work is pending (then the host's time, if any, is kept) */
  async #save(schedule: Schedule, pending: boolean): Promise<void> {
    // What storage holds already is not written again (a run that changed nothing writes no row).
    const next = stored(schedule, pending);
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
    // A host without alarms of its own has none to keep (and no time is kept out of storage otherwise).
    if (!this.#keepsHost) return;
    const current = await this.#storage.getAlarm();
    if (current === null) return;
    const times = [...Object.values(schedule.work), ...Object.values(this.#times(schedule))];
    if (!times.includes(current) && !Object.values(schedule.work).some((at) => at < current)) schedule.host = current;
  }

  async #arm(schedule: Schedule): Promise<void> {
    dropUnarmable(schedule);
    const times = Object.values(this.#times(schedule));
    await this.#save(schedule, times.length > 0);
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

const isIdle = (times: Record<string, number>): boolean => Object.keys(times).length === 0;

/**
 * @param pending - whether dokit work is pending, stored or not (the host's time is kept only then:
 *   with none pending, the platform alarm is simply the host's)
 * @returns what storage holds for `schedule`: its JSON, or "" when it is not stored (nothing to keep)
 */
const stored = (schedule: Schedule, pending: boolean): string =>
  isIdle(schedule.work) && (schedule.host === undefined || !pending) ? "" : JSON.stringify(schedule);
