import { DurableObject } from "cloudflare:workers";
import { getCurrentAgent, Lifecycle } from "../../src/lifecycle";
import { type Schedule, type ScheduleOptions, Scheduler } from "../../src/schedule";

/** A schedule as the tests read it over RPC (a payload type the RPC layer can serialize). */
export type Stored = Schedule<{ [key: string]: string | number } | undefined>;

/** Any scenario's Scheduler, called by name (the scenario types its own map). */
const untyped = (host: { scheduler: object }) => host.scheduler as Scheduler;

/** One recorded callback run. */
export type Run = { callback: string; payload: { [key: string]: string | number } | undefined; id: string; type: string; agentOk: boolean };

/** Test bookkeeping in the object's own SQLite table. */
class Journal {
  readonly #ctx: DurableObjectState;
  constructor(ctx: DurableObjectState) {
    this.#ctx = ctx;
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS journal (n INTEGER PRIMARY KEY, kind TEXT, entry TEXT)");
  }
  add(kind: string, entry: unknown): void {
    this.#ctx.storage.sql.exec("INSERT INTO journal (kind, entry) VALUES (?, ?)", kind, JSON.stringify(entry));
  }
  read<T>(kind: string): T[] {
    return this.#ctx.storage.sql
      .exec<{ entry: string }>("SELECT entry FROM journal WHERE kind = ? ORDER BY n", kind)
      .toArray()
      .map((row) => JSON.parse(row.entry) as T);
  }
}

/** What every scenario's test methods share. */
abstract class TimerHost extends DurableObject<Env> {
  readonly journal = new Journal(this.ctx);
  abstract readonly scheduler: object;
  abstract readonly lifecycle: Lifecycle;

  record(callback: string, payload: Run["payload"], schedule: Schedule<unknown>): void {
    this.journal.add("run", { callback, payload, id: schedule.id, type: schedule.type, agentOk: getCurrentAgent().agent === this } satisfies Run);
  }

  async onAlarm() {
    this.journal.add("host", { agentOk: getCurrentAgent().agent === this });
  }

  async set(when: Date | string | number, callback: string, payload?: unknown, options?: ScheduleOptions): Promise<Stored> {
    await this.lifecycle.start();
    return (await untyped(this).set(when, callback, payload as never, options)) as Stored;
  }
  async every(seconds: number, callback: string, payload?: unknown, options?: ScheduleOptions): Promise<Stored> {
    await this.lifecycle.start();
    return (await untyped(this).every(seconds, callback, payload as never, options)) as Stored;
  }
  async get(id: string): Promise<Stored | undefined> {
    await this.lifecycle.start();
    return (await untyped(this).get(id)) as Stored | undefined;
  }
  async list(): Promise<Stored[]> {
    await this.lifecycle.start();
    return (await untyped(this).list()) as Stored[];
  }
  async cancel(id: string) {
    await this.lifecycle.start();
    return untyped(this).cancel(id);
  }
  /** @returns the stored next-run time (ms) */
  due(id: string): number | undefined {
    return this.ctx.storage.sql.exec<{ due: number }>("SELECT due FROM dokit_schedules WHERE id = ?", id).toArray()[0]?.due;
  }
  /**
   * Moves a schedule `ms` into the past (its interval grid too), as if that much time
   * had passed, and re-arms the alarm through the public API (set and cancel a far job).
   */
  async backdate(id: string, ms: number): Promise<number | undefined> {
    await this.lifecycle.start();
    this.ctx.storage.sql.exec(
      "UPDATE dokit_schedules SET due = due - ?1, spec = CASE WHEN json_extract(spec, '$.anchor') IS NULL THEN spec ELSE json_set(spec, '$.anchor', json_extract(spec, '$.anchor') - ?1) END WHERE id = ?2",
      ms,
      id,
    );
    await untyped(this).set(365 * 86_400, "noop", undefined, { id: "__poke" });
    await untyped(this).cancel("__poke");
    return this.due(id);
  }
  runs(): Run[] {
    return this.journal.read<Run>("run");
  }
  errors(): { message: string; id: string; callback: string }[] {
    return this.journal.read("error");
  }
  hostRuns(): { agentOk: boolean }[] {
    return this.journal.read("host");
  }
  async armedAt(): Promise<number | null> {
    return this.ctx.storage.getAlarm();
  }
  async setHostAlarm(at: number) {
    await this.lifecycle.start();
    await this.ctx.storage.setAlarm(at);
  }
}

/** The main scenario: typed callbacks, a failing one, retries with long backoffs (driven by the tests). */
export class Timers extends TimerHost {
  readonly scheduler = new Scheduler({
    callbacks: {
      note: (payload: { text: string }, schedule: Schedule<unknown>) => this.record("note", payload, schedule),
      noop: () => {},
      fail: (payload: { why: string }, schedule: Schedule<unknown>) => {
        this.record("fail", payload, schedule);
        throw new Error(`failing: ${payload.why}`);
      },
      // Change another schedule while a run goes on.
      cancelOther: async (payload: { id: string }): Promise<void> => {
        await untyped(this as TimerHost).cancel(payload.id);
      },
      replaceOther: async (payload: { id: string; text: string }): Promise<void> => {
        await untyped(this as TimerHost).set(3600, "note", { text: payload.text }, { id: payload.id });
      },
    },
    retry: { maxAttempts: 3, baseDelayMs: 60_000, maxDelayMs: 240_000 },
    onError: (error, schedule) => this.journal.add("error", { message: (error as Error).message, id: schedule.id, callback: schedule.callback }),
  });
  readonly lifecycle = Lifecycle.install(this).use(this.scheduler);
}

/** keepFailed: a one-shot that failed its last attempt stays, listed with `failed`. */
export class KeepingTimers extends TimerHost {
  readonly scheduler = new Scheduler({
    callbacks: {
      noop: () => {},
      fail: (payload: { why: string }, schedule: Schedule<unknown>) => {
        this.record("fail", payload, schedule);
        throw new Error(`failing: ${payload.why}`);
      },
    },
    retry: { maxAttempts: 1 },
    keepFailed: true,
  });
  readonly lifecycle = Lifecycle.install(this).use(this.scheduler);
}

/** A callback whose first run dies with the instance; the deadman alarm (1 s) runs it again. */
export class HangingTimers extends TimerHost {
  readonly scheduler = new Scheduler({
    callbacks: {
      noop: () => {},
      hang: async (payload: { n: number }, schedule: Schedule<unknown>) => {
        const starts = this.journal.read("start").length + 1;
        this.journal.add("start", starts);
        // The first run dies with its instance (as when the isolate is evicted or crashes mid-run).
        if (starts === 1) {
          await this.ctx.storage.sync(); // the journal entry survives; the rest of the run does not
          this.ctx.abort("simulated eviction mid-run");
        }
        this.record("hang", payload, schedule);
      },
    },
    hungTimeoutSeconds: 1,
  });
  readonly lifecycle = Lifecycle.install(this).use(this.scheduler);

  starts(): number {
    return this.journal.read("start").length;
  }
}

/** Without a typed map: any name compiles; unknown names still fail at runtime. */
export class UntypedTimers extends TimerHost {
  readonly scheduler = new Scheduler();
  readonly lifecycle = Lifecycle.install(this).use(this.scheduler);
}
