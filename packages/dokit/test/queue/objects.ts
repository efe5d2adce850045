import { DurableObject } from "cloudflare:workers";
import { getCurrentAgent, Lifecycle } from "../../src/lifecycle";
import { Queue, type QueueItem } from "../../src/queue";
import { Scheduler } from "../../src/schedule";

/** Test bookkeeping in the object's own SQLite table. */
function journal(ctx: DurableObjectState) {
  ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS journal (n INTEGER PRIMARY KEY, kind TEXT, entry TEXT)");
  return {
    add: (kind: string, entry: unknown) => void ctx.storage.sql.exec("INSERT INTO journal (kind, entry) VALUES (?, ?)", kind, JSON.stringify(entry)),
    read: <T>(kind: string): T[] =>
      ctx.storage.sql
        .exec<{ entry: string }>("SELECT entry FROM journal WHERE kind = ? ORDER BY n", kind)
        .toArray()
        .map((row) => JSON.parse(row.entry) as T),
  };
}

/** Typed callbacks, a failing one with quick retries, onError. */
export class Work extends DurableObject<Env> {
  readonly journal = journal(this.ctx);
  readonly queue = new Queue({
    callbacks: {
      step: (payload: { n: number }, item: QueueItem<unknown>) => {
        this.journal.add("run", { n: payload.n, id: item.id, agentOk: getCurrentAgent().agent === this });
      },
      boom: (payload: { n: number }) => {
        this.journal.add("run", { n: payload.n, failed: true });
        throw new Error(`boom ${payload.n}`);
      },
    },
    retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 },
    onError: (error, item) => this.journal.add("error", { message: (error as Error).message, id: item.id, agentOk: getCurrentAgent().agent === this }),
  });
  readonly lifecycle = Lifecycle.install(this).use(this.queue);

  /** Pushes `count` steps in one request and reports how many ran before it returned. */
  async pushSteps(from: number, count: number): Promise<{ ids: string[]; ranDuringRequest: number }> {
    await this.lifecycle.start();
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push((await this.queue.push("step", { n: from + i })).id);
    return { ids, ranDuringRequest: this.runs().length };
  }
  async push(callback: "step" | "boom", n: number, id?: string) {
    await this.lifecycle.start();
    return this.queue.push(callback, { n }, id === undefined ? {} : { id });
  }
  runs(): { n: number; id?: string; agentOk?: boolean; failed?: boolean }[] {
    return this.journal.read("run");
  }
  errors(): { message: string; id: string; agentOk: boolean }[] {
    return this.journal.read("error");
  }
  async pending() {
    await this.lifecycle.start();
    return this.queue.list();
  }
}

/** An item whose first run dies with the instance; the deadman alarm (1 s) runs it again. */
export class CrashingWork extends DurableObject<Env> {
  readonly journal = journal(this.ctx);
  readonly queue = new Queue({
    callbacks: {
      crash: async (payload: { n: number }) => {
        const starts = this.journal.read("start").length + 1;
        this.journal.add("start", starts);
        if (starts === 1) {
          await this.ctx.storage.sync(); // the journal entry survives; the rest of the run does not
          this.ctx.abort("simulated eviction mid-run");
        }
        this.journal.add("run", payload.n);
      },
      step: (payload: { n: number }) => this.journal.add("run", payload.n),
      // Kills its instance every time: a poison pill.
      always: async () => {
        this.journal.add("start", "always");
        await this.ctx.storage.sync();
        this.ctx.abort("simulated crash");
      },
    },
    hungTimeoutSeconds: 1,
    onError: (error) => this.journal.add("error", { code: (error as { code?: string }).code, message: (error as Error).message }),
  });
  readonly lifecycle = Lifecycle.install(this).use(this.queue);

  async pushAll() {
    await this.lifecycle.start();
    await this.queue.push("crash", { n: 1 });
    await this.queue.push("step", { n: 2 });
  }
  async pushPoison() {
    await this.lifecycle.start();
    await this.queue.push("always", undefined, { id: "poison" });
    await this.queue.push("step", { n: 9 });
  }
  errors(): { code?: string; message: string }[] {
    return this.journal.read("error");
  }
  runs(): number[] {
    return this.journal.read("run");
  }
  starts(): number {
    return this.journal.read("start").length;
  }
}

/** A Queue and a Scheduler on the same object: both share the one alarm. */
export class ScheduledWork extends DurableObject<Env> {
  readonly journal = journal(this.ctx);
  readonly queue = new Queue({ callbacks: { step: (payload: { n: number }) => this.journal.add("run", `queue ${payload.n}`) } });
  readonly scheduler = new Scheduler({ callbacks: { tick: () => this.journal.add("run", "tick") } });
  readonly lifecycle = Lifecycle.install(this).use(this.scheduler).use(this.queue);

  async both(): Promise<number | null> {
    await this.lifecycle.start();
    await this.scheduler.set(3600, "tick");
    await this.queue.push("step", { n: 1 });
    return this.ctx.storage.getAlarm();
  }
  runs(): string[] {
    return this.journal.read("run");
  }
  /** The platform alarm, the next due time of each job table, and the shared alarm's stored schedule. */
  async pendingAlarm(): Promise<{ alarm: number | null; schedule: number | null; queue: number | null; stored: unknown }> {
    const next = (table: string) => this.ctx.storage.sql.exec<{ due: number | null }>(`SELECT min(due) AS due FROM ${table} WHERE failed = 0`).one().due;
    return { alarm: await this.ctx.storage.getAlarm(), schedule: next("dokit_schedules"), queue: next("dokit_queue"), stored: await this.ctx.storage.get("__dokit_alarms") };
  }
}
