import type { DispatchTable } from "./dispatch";

// The platform keeps ONE alarm per object. dokit shares it with the host by
// this rule: capabilities schedule keyed work through `lifecycle.alarms`;
// when that work is earlier than an alarm the host set itself, the host's
// time is remembered and re-armed after dokit's work runs, so the host's
// alarm is never lost or moved. The host's `onAlarm` runs only when its own
// alarm is due (an alarm dokit did not schedule counts as the host's).

const KEY = "__dokit_alarms";

type Schedule = { work: Record<string, number>; host?: number };

/** Keyed alarm work for capabilities, sharing the platform's single alarm with the host. */
export class Alarms {
  readonly #storage: DurableObjectStorage;
  readonly #table: DispatchTable;

  /** @internal */
  constructor(storage: DurableObjectStorage, table: DispatchTable) {
    this.#storage = storage;
    this.#table = table;
  }

  /**
   * Runs the alarm hook claimed for `key` at `at` (ms since epoch); replaces an earlier schedule of `key`.
   * @param key - the key a capability claimed with `claims.onAlarm(key, hook)`
   * @param at - when to run it
   */
  async schedule(key: string, at: number): Promise<void> {
    const schedule = await this.#load();
    await this.#noteHostAlarm(schedule);
    schedule.work[key] = at;
    await this.#arm(schedule);
  }

  /** Cancels the work scheduled for `key`. */
  async cancel(key: string): Promise<void> {
    const schedule = await this.#load();
    if (!(key in schedule.work)) return;
    await this.#noteHostAlarm(schedule);
    delete schedule.work[key];
    await this.#arm(schedule);
  }

  /**
   * Runs due work, then the host's hook when its alarm is due (internal; called by the alarm entry point).
   */
  async run(now: number, runHost: () => Promise<void>): Promise<void> {
    const schedule = await this.#load();
    const due = Object.entries(schedule.work).filter(([, at]) => at <= now);
    const ours = due.length > 0;
    for (const [key] of due) delete schedule.work[key];
    await this.#save(schedule);
    for (const [key] of due) {
      const hook = this.#table.alarms[key];
      try {
        await hook?.value();
      } catch (error) {
        console.error(`dokit: alarm work "${key}" of ${hook?.owner} failed`, error);
      }
    }
    const hostDue = schedule.host !== undefined ? schedule.host <= now : !ours;
    if (hostDue) {
      delete schedule.host;
      await this.#save(schedule);
      await runHost();
    }
    await this.#noteHostAlarm(schedule);
    await this.#arm(schedule);
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
    if (times.length === 0) return;
    const next = Math.min(...times);
    if ((await this.#storage.getAlarm()) !== next) await this.#storage.setAlarm(next);
  }
}
