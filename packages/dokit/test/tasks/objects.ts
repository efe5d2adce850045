import { DurableObject } from "cloudflare:workers";
import { getCurrentAgent, Lifecycle } from "../../src/lifecycle";
import { Observability } from "../../src/observability";
import { Queue } from "../../src/queue";
import { Scheduler } from "../../src/schedule";
import { NonRetryableError, type TaskCallbacks, Tasks, type TaskStep } from "../../src/tasks";

/** Test bookkeeping in the object's own SQLite table (it survives evictions and aborts). */
function journal(ctx: DurableObjectState) {
  ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS journal (n INTEGER PRIMARY KEY, kind TEXT, entry TEXT)");
  return {
    add: (kind: string, entry: unknown) => void ctx.storage.sql.exec("INSERT INTO journal (kind, entry) VALUES (?, ?)", kind, JSON.stringify(entry ?? null)),
    read: <T>(kind: string): T[] =>
      ctx.storage.sql
        .exec<{ entry: string }>("SELECT entry FROM journal WHERE kind = ? ORDER BY n", kind)
        .toArray()
        .map((row) => JSON.parse(row.entry) as T),
    has: (kind: string, entry: unknown): boolean =>
      ctx.storage.sql.exec("SELECT 1 FROM journal WHERE kind = ? AND entry = ?", kind, JSON.stringify(entry)).toArray().length > 0,
  };
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A run as the tests read it over RPC (loosely typed: the recursive JSON types are too deep for RPC's stub types). */
// biome-ignore lint/suspicious/noExplicitAny: test-side view of any run
export type RunView = {
  runId: string;
  definition: string;
  state: string;
  createdAt: number;
  reason?: string;
  statusMessage?: string;
  attempt?: number;
  wakeAt?: number;
  settledAt?: number;
  result?: any;
  error?: { name: string; message: string };
  metadata?: any;
};

/** What a test object exposes over RPC: start runs, read them, wait for them, control them. */
abstract class TaskHost extends DurableObject<Env> {
  readonly j = journal(this.ctx);
  abstract readonly tasks: object;
  abstract readonly lifecycle: Lifecycle;
  /** The object's Tasks, untyped (each class types its own definitions). */
  get t(): Tasks {
    // SAFETY: every subclass's `tasks` is a Tasks; only its definitions' types differ.
    return this.tasks as Tasks;
  }

  async start(definition: string, input?: unknown, options?: { idempotencyKey?: string; runId?: string; metadata?: Record<string, string>; retain?: boolean }) {
    await this.lifecycle.start();
    return this.t.run(definition, input, options);
  }
  async settle(runId: string, timeout = 10_000): Promise<RunView | null> {
    await this.lifecycle.start();
    return this.t.wait(runId, { timeout });
  }
  async get(runId: string): Promise<RunView | null> {
    await this.lifecycle.start();
    return this.t.get(runId);
  }
  async cancel(runId: string, reason?: string) {
    await this.lifecycle.start();
    return this.t.cancel(runId, reason);
  }
  async send(runId: string, type: string, payload?: unknown) {
    await this.lifecycle.start();
    return this.t.sendEvent(runId, type, payload);
  }
  /** @returns the journal entries of `kind`, as JSON text (RPC's stub types cannot carry untyped JSON) */
  async read(kind: string): Promise<string> {
    return JSON.stringify(this.j.read(kind));
  }
  async inspect(): Promise<(RunView & { steps: { name: string; kind: string; state: string; attempts: number }[] })[]> {
    await this.lifecycle.start();
    return this.t.inspect();
  }
  async flag(name: string) {
    this.j.add("flag", name);
  }
}

/** The scenarios of the step API, each a definition. */
export class Flows extends TaskHost {
  readonly tasks = new Tasks({
    definitions: {
      steps: async (input: { tag: string }, step: TaskStep) => {
        this.j.add("between", "start");
        const a = await step.do("a", () => (this.j.add("cb", "a"), 1));
        this.j.add("between", "after a");
        const b = await step.do("b", async () => (this.j.add("cb", "b"), a + 1));
        await step.sleep("nap", 5);
        this.j.add("between", "after nap");
        const c = await step.do("c", () => (this.j.add("cb", "c"), b + 1));
        return { a, b, c, tag: input.tag, agentOk: getCurrentAgent().agent === this };
      },
      flaky: (input: { failures: number; limit: number; delay: number; backoff?: "constant" | "linear" | "exponential" }, step: TaskStep) =>
        step.do("flaky", { retries: { limit: input.limit, delay: input.delay, ...(input.backoff ? { backoff: input.backoff } : {}) } }, ({ attempt, idempotencyKey }) => {
          this.j.add("attempt", { attempt, key: idempotencyKey, at: Date.now() });
          if (attempt <= input.failures) throw new Error(`fail ${attempt}`);
          return attempt;
        }),
      fatal: (_: null, step: TaskStep) =>
        step.do("fatal", { retries: { limit: 5, delay: 1 } }, () => {
          this.j.add("attempt", "fatal");
          throw new NonRetryableError("no way");
        }),
      caught: async (_: null, step: TaskStep) => {
        let outcome: string;
        try {
          await step.do("fatal", () => {
            this.j.add("attempt", "caught");
            throw new NonRetryableError("refused");
          });
          outcome = "no error";
        } catch (error) {
          outcome = `${(error as Error).name}: ${(error as Error).message}`;
        }
        this.j.add("outcome", outcome);
        await step.sleep("replay", 5);
        return outcome;
      },
      slow: (input: { timeout: number }, step: TaskStep) =>
        step.do("slow", { timeout: input.timeout, retries: { limit: 2, delay: 1 } }, async ({ attempt, signal }) => {
          this.j.add("slow", { attempt });
          if (attempt > 1) return "fast";
          await pause(input.timeout * 4);
          this.j.add("late", { attempt, aborted: signal.aborted, code: (signal.reason as { code?: string } | undefined)?.code });
          return "late";
        }),
      sleeper: async (input: { ms: number }, step: TaskStep) => {
        const before = await step.do("before", () => Date.now());
        await step.sleep("nap", input.ms);
        const after = await step.do("after", () => Date.now());
        return { before, after };
      },
      until: async (input: { at: number }, step: TaskStep) => {
        await step.sleepUntil("wake", new Date(input.at));
        return step.do("woke", () => Date.now());
      },
      duplicate: async (_: null, step: TaskStep) => {
        await step.do("same", () => (this.j.add("cb", "same 1"), 1));
        await step.do("same", () => (this.j.add("cb", "same 2"), 2));
        return "unreachable";
      },
      diverge: async (_: null, step: TaskStep) => {
        if (this.j.has("flag", "flip")) await step.sleep("first", 1);
        else await step.do("first", () => 1);
        await step.sleep("pause", 300);
        return "unreachable once flipped";
      },
      approval: async (input: { timeout?: number }, step: TaskStep) => {
        await step.do("ask", () => (this.j.add("cb", "ask"), "asked"));
        const answer = await step.waitForEvent<{ ok: boolean }>("answer", { type: "approve", ...(input.timeout !== undefined ? { timeout: input.timeout } : {}) });
        return step.do("record", () => (this.j.add("cb", "record"), answer));
      },
      patient: async (_: null, step: TaskStep) => {
        try {
          return await step.waitForEvent("answer", { type: "approve", timeout: 20 });
        } catch (error) {
          return `gave up: ${(error as { code?: string }).code}`;
        }
      },
      hold: (_: null, step: TaskStep) =>
        step.do("hold", ({ signal }) => {
          this.j.add("hold", "started");
          return new Promise<string>((_, reject) =>
            signal.addEventListener("abort", () => {
              this.j.add("hold", (signal.reason as { code?: string }).code);
              reject(signal.reason);
            }),
          );
        }),
      stubborn: async (_: null, step: TaskStep) => {
        await step.do("stubborn", async () => {
          this.j.add("stubborn", "started");
          await pause(100);
          this.j.add("stubborn", "finished");
          return "ignored the signal";
        });
        await step.do("after", () => this.j.add("stubborn", "after ran"));
      },
      status: async (input: { runId: string }, step: TaskStep) => {
        await step.status("one");
        this.j.add("status", (await this.t.get(input.runId))?.state === "running" ? ((await this.t.get(input.runId)) as { statusMessage?: string }).statusMessage : null);
        await step.sleep("s1", 5);
        await step.status("two");
        await step.sleep("s2", 400);
        return "done";
      },
      keyed: (_: null, step: TaskStep) => step.do("k", ({ idempotencyKey }) => ({ key: idempotencyKey, asked: step.idempotencyKey("k") })),
      big: (input: { size: number }, step: TaskStep) => step.do("big", () => "x".repeat(input.size)),
      echo: (input: unknown) => input as never,
      nothing: async () => {},
      one: (_: null, step: TaskStep) => step.do("only", () => 1),
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(new Observability()).use(this.tasks);

  /** Starts a run the moment the one before settled (its alarm invocation still finishing), `n` times. @returns their states */
  async backToBack(n: number): Promise<string[]> {
    await this.lifecycle.start();
    const states: string[] = [];
    for (let i = 0; i < n; i++) {
      const { runId } = await this.t.run("one", null);
      states.push((await this.t.wait(runId, { timeout: 3000 }).catch((error: Error) => ({ state: error.message })))?.state ?? "none");
    }
    return states;
  }

  /**
   * Runs `definition` once to create the tables (as on an object in use), then once more counting
   * what that run writes: SQL rows (every cursor's rowsWritten) and storage keys put or deleted.
   * @returns the rows in all, and the keys written, in order
   */
  async countRun(definition: string): Promise<{ rows: number; keys: string[] }> {
    await this.lifecycle.start();
    const warm = await this.t.run(definition, null);
    await this.t.wait(warm.runId);
    // Until the alarm invocation that ran it has ended (its alarm cleared): the counted run is accepted with none running.
    const idle = async () => {
      for (let i = 0; i < 1000 && (await this.ctx.storage.getAlarm()) !== null; i++) await pause(2);
    };
    await idle();
    const storage = this.ctx.storage;
    const sql = storage.sql;
    const exec = sql.exec;
    // The shared alarm writes one key at a time.
    const put = storage.put as (key: string, value: unknown) => Promise<void>;
    const del = storage.delete as (key: string) => Promise<boolean>;
    const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
    const keys: string[] = [];
    sql.exec = ((query: string, ...params: SqlStorageValue[]) => {
      const cursor = exec.call(sql, query, ...params);
      cursors.push(cursor);
      return cursor;
    }) as typeof sql.exec;
    storage.put = ((key: string, value: unknown) => (keys.push(`put ${key}`), put.call(storage, key, value))) as unknown as typeof storage.put;
    storage.delete = ((key: string) => (keys.push(`delete ${key}`), del.call(storage, key))) as unknown as typeof storage.delete;
    try {
      const { runId } = await this.t.run(definition, null);
      await this.t.wait(runId);
      await idle();
    } finally {
      sql.exec = exec;
      storage.put = put as unknown as typeof storage.put;
      storage.delete = del as unknown as typeof storage.delete;
    }
    return { rows: cursors.reduce((sum, cursor) => sum + cursor.rowsWritten, 0) + keys.length, keys };
  }
}

/** The reference's docs example, with only its import paths changed (test/tasks/reference-example.ts). */
export { ReportObject } from "./reference-example";

/** The deployment the next constructed Deploys object sees (module state: the test flips it, then evicts the object). */
let deployment = 1;

/** A class whose definitions change between "deployments". */
export class Deploys extends TaskHost {
  readonly tasks = new Tasks<TaskCallbacks>({
    definitions:
      deployment === 1
        ? {
            "nap@v1": async (_: unknown, step: TaskStep) => {
              await step.sleep("nap", 1000);
              return "v1";
            },
            "kept@v1": async (_: unknown, step: TaskStep) => {
              await step.sleep("nap", 1000);
              return "kept";
            },
          }
        : {
            "kept@v1": async (_: unknown, step: TaskStep) => {
              await step.sleep("nap", 1000);
              return "kept";
            },
          },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.tasks);

  async deploy(next: number) {
    deployment = next;
  }
}

/** Tasks, a Scheduler and a Queue on one object: one alarm. */
export class Mixed extends TaskHost {
  readonly tasks = new Tasks({
    definitions: {
      work: async (input: { n: number }, step: TaskStep) => {
        const a = await step.do("a", () => input.n);
        await step.sleep("nap", 20);
        return step.do("b", () => a * 10);
      },
      hang: (_: null, step: TaskStep) =>
        step.do("hang", ({ signal }) => new Promise<null>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)))),
      broken: (_: null, step: TaskStep) =>
        step.do("boom", { retries: { limit: 3, delay: 10, backoff: "constant" } }, () => {
          this.j.add("broken", Date.now());
          throw new Error("always");
        }),
    },
  });
  readonly scheduler = new Scheduler({ callbacks: { tick: (payload: { n: number }) => this.j.add("tick", payload.n) } });
  readonly queue = new Queue({ callbacks: { item: (payload: { n: number }) => this.j.add("item", payload.n) } });
  readonly lifecycle = Lifecycle.install(this).use(this.scheduler).use(this.tasks).use(this.queue);

  async everything() {
    await this.lifecycle.start();
    const broken = await this.tasks.run("broken", null);
    const runs = [];
    for (let n = 1; n <= 5; n++) runs.push((await this.tasks.run("work", { n })).runId);
    for (let n = 1; n <= 3; n++) await this.scheduler.set(0.05 * n, "tick", { n });
    for (let n = 1; n <= 3; n++) await this.queue.push("item", { n });
    return { broken: broken.runId, runs };
  }
  async tickIn(seconds: number, n: number) {
    await this.lifecycle.start();
    await this.scheduler.set(seconds, "tick", { n });
  }
  async alarmState() {
    return { alarm: await this.ctx.storage.getAlarm(), work: (await this.ctx.storage.get<{ work: Record<string, number> }>("__dokit_alarms"))?.work ?? {} };
  }
}

/**
 * A run whose instance is aborted (ctx.abort) at planned points: before a step (a boundary) and
 * in the middle of its callback. Each point aborts once; the plan and the marks live in SQLite.
 */
export class Crashes extends TaskHost {
  readonly tasks = new Tasks({
    definitions: {
      interrupts: async (input: { steps: number }, step: TaskStep) => {
        const results: number[] = [];
        for (let i = 1; i <= input.steps; i++) {
          await this.abortAt(`before s${i}`);
          results.push(
            await step.do(`s${i}`, async ({ attempt, idempotencyKey }) => {
              this.j.add("cb", { step: i, attempt, key: idempotencyKey, interrupted: step.interrupted });
              await this.abortAt(`mid s${i}`);
              return i;
            }),
          );
        }
        await this.abortAt("end");
        return results;
      },
    },
    hungTimeoutSeconds: 1,
  });
  readonly lifecycle = Lifecycle.install(this).use(this.tasks);

  /** Aborts the instance the first time `point` is reached, when planned. */
  async abortAt(point: string): Promise<void> {
    if (!this.j.has("plan", point) || this.j.has("done", point)) return;
    this.j.add("done", point);
    await this.ctx.storage.sync();
    this.ctx.abort(`planned abort at ${point}`);
  }
  async plan(points: string[]) {
    for (const point of points) this.j.add("plan", point);
  }
  /** Wakes the object (its start takes over a run an aborted instance held). @returns the newest run's state */
  async pokeState(): Promise<string | undefined> {
    await this.lifecycle.start();
    return (await this.t.list())[0]?.state;
  }
}
