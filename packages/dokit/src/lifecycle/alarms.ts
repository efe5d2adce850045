import type { AlarmHook, Claims } from "./capability";
import { claimKey, type Owned } from "./dispatch";
import type { Lifecycle } from "./lifecycle";

// The platform keeps ONE alarm per object. dokit shares it with the host by
// this rule: capabilities schedule keyed work claimed with `claimAlarm`;
// when that work is earlier than an alarm the host set itself, the host's
// time is remembered and re-armed after dokit's work runs, so the host's
// alarm is never lost or moved. The host's `onAlarm` runs only when its own
// alarm is due (an alarm dokit did not schedule counts as the host's).
//
// This module is imported only by capabilities that schedule work: an object
// whose capabilities never claim an alarm neither carries this code nor pays
// a storage read when its own alarm fires.

const KEY = "__dokit_alarms";

type Schedule = { work: Record<string, number>; host?: number };

/** One capability's keyed alarm work, returned by {@link claimAlarm}. */
export interface AlarmWork {
  /** Runs the hook at `at` (ms since epoch); replaces an earlier schedule of the same key. */
  schedule(at: number): Promise<void>;
  /** Cancels the pending run, if any. */
  cancel(): Promise<void>;
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
  return { schedule: (at) => alarms.schedule(key, at), cancel: () => alarms.cancel(key) };
}

/** The first claim on a lifecycle creates its Alarms and takes the alarm entry point for it. */
function installAlarms(claims: Claims): Alarms {
  const alarms = new Alarms(claims.lifecycle.ctx.storage);
  perLifecycle.set(claims.lifecycle, alarms);
  claims.takeAlarm((now, runHost) => alarms.run(now, runHost));
  return alarms;
}

class Alarms {
  readonly #storage: DurableObjectStorage;
  /** Claimed work by key (a null-prototype table, like the dispatch table's). */
  readonly hooks: Record<string, Owned<AlarmHook>> = Object.create(null);

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  async schedule(key: string, at: number): Promise<void> {
    const schedule = await this.#load();
    await this.#noteHostAlarm(schedule);
    schedule.work[key] = at;
    await this.#arm(schedule);
  }

  async cancel(key: string): Promise<void> {
    const schedule = await this.#load();
    if (!(key in schedule.work)) return;
    await this.#noteHostAlarm(schedule);
    delete schedule.work[key];
    await this.#arm(schedule);
  }

  /**
   * Runs due work, then the host's hook when its alarm is due. Hooks (and the
   * host) may schedule again while they run, so the schedule is read back
   * before the alarm is re-armed.
   */
  async run(now: number, runHost: () => Promise<void>): Promise<void> {
    const schedule = await this.#load();
    const due = Object.keys(schedule.work).filter((key) => (schedule.work[key] as number) <= now);
    for (const key of due) delete schedule.work[key];
    const hostDue = schedule.host !== undefined ? schedule.host <= now : due.length === 0;
    if (hostDue) delete schedule.host;
    await this.#save(schedule);
    for (const key of due) {
      const claimed = this.hooks[key];
      try {
        await claimed?.value();
      } catch (error) {
        console.error(`dokit: alarm work "${key}" of ${claimed?.owner} failed`, error);
      }
    }
    if (hostDue) await runHost();
    const after = await this.#load();
    // #save drops the stored schedule when no work is pending: keep the host's time from memory.
    if (schedule.host !== undefined) after.host ??= schedule.host;
    await this.#noteHostAlarm(after);
    await this.#arm(after);
  }

  async #load(): Promise<Schedule> {
    return (await this.#storage.get<Schedule>(KEY)) ?? { work: {} };
  }

  async #save(schedule: Schedule): Promise<void> {
    // With no dokit work pending, the platform alarm is simply the host's.
    if (Object.keys(schedule.work).length === 0) await this.#storage.delete(KEY);
    else await this.#storage.put(KEY, schedule);
  }

  /** Remembers an alarm the host set itself (any alarm time dokit did not schedule). */
  async #noteHostAlarm(schedule: Schedule): Promise<void> {
    const current = await this.#storage.getAlarm();
    if (current !== null && !Object.values(schedule.work).includes(current)) schedule.host = current;
  }

  async #arm(schedule: Schedule): Promise<void> {
    await this.#save(schedule);
    const times = Object.values(schedule.work);
    if (schedule.host !== undefined) times.push(schedule.host);
    if (times.length === 0) {
      // Nothing left (#noteHostAlarm kept any alarm of the host's): drop dokit's stale time,
      // or it would fire with nothing due and reach the host's onAlarm as if it were its own.
      if ((await this.#storage.getAlarm()) !== null) await this.#storage.deleteAlarm();
      return;
    }
    const next = Math.min(...times);
    if ((await this.#storage.getAlarm()) !== next) await this.#storage.setAlarm(next);
  }
}
