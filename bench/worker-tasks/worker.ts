// Two objects with the same Task definitions: DokitTasks on dokit/tasks (with dokit's Lifecycle),
// RefTasks on npm agents@0.32.0's agents/tasks (with agents/lifecycle). Each counts the rows it
// writes (SQL rows through `sql.exec`, keys through `put`/`delete`) and its alarm invocations.
//   GET /<dokit|ref>/<name>/steps?n=100      after a one-step warm-up run, one run of n trivial steps: ms until it completed, rows written, wakes
//   GET /<dokit|ref>/<name>/many?n=1000      n one-step runs started at once: ms until all completed, wakes
//   GET /<dokit|ref>/<name>/crash            a run whose first step aborts the instance mid-callback (the call fails)
//   GET /<dokit|ref>/<name>/recovered        wakes the object; answers ms from this call until the step ran again
import { DurableObject } from "cloudflare:workers";
import { Lifecycle as RefLifecycle } from "agents/lifecycle";
import { Tasks as RefTasksCapability, type TaskStep as RefStep } from "agents/tasks";
import { Lifecycle } from "dokit/lifecycle";
import { Tasks, type TaskStep } from "dokit/tasks";
import { countRows } from "../lib/rows";

interface Env {
  DOKIT_TASKS: DurableObjectNamespace<DokitTasks>;
  REF_TASKS: DurableObjectNamespace<RefTasks>;
}

type Step = TaskStep | RefStep;
type Handle = { get(runId: string): Promise<{ state: string } | null>; run(name: string, input: unknown, options?: { runId?: string }): Promise<{ runId: string }> };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The definitions both objects run. */
function definitions(host: BenchHost) {
  return {
    steps: async (input: { n: number }, step: Step) => {
      let sum = 0;
      for (let i = 0; i < input.n; i++) sum += await step.do(`s${i}`, () => i);
      return sum;
    },
    one: (_: null, step: Step) => step.do("only", () => 1),
    crash: async (_: null, step: Step) => {
      await step.do("first", async ({ attempt }) => {
        if (attempt === 1 && !host.mark("aborted")) {
          await host.crash("bench: abort mid-step");
        }
        host.mark("recovered", Date.now());
        return attempt;
      });
    },
  };
}

/** Counting, polling and the routes both objects share. */
abstract class BenchHost extends DurableObject<Env> {
  rows = 0;
  wakes = 0;
  abstract readonly tasks: Handle;
  abstract start(): Promise<void>;

  /** Flushes storage, then resets the object as a crash would. */
  async crash(reason: string): Promise<void> {
    await this.ctx.storage.sync();
    this.ctx.abort(reason);
  }

  /** Counts rows written from now on. */
  protected count(): void {
    const storage = this.ctx.storage;
    const sql = countRows(storage.sql);
    let rows = 0;
    this.counted = () => (rows += sql.written());
    const put = storage.put.bind(storage) as (key: string | Record<string, unknown>, value?: unknown) => Promise<void>;
    const del = storage.delete.bind(storage) as (key: string | string[]) => Promise<unknown>;
    storage.put = (async (key: string | Record<string, unknown>, value?: unknown) => {
      this.rows += typeof key === "string" ? 1 : Object.keys(key).length;
      return put(key, value);
    }) as typeof storage.put;
    storage.delete = (async (key: string | string[]) => {
      this.rows += Array.isArray(key) ? key.length : 1;
      return del(key);
    }) as typeof storage.delete;
    const alarm = (this as unknown as { alarm(info?: unknown): Promise<void> }).alarm;
    Object.defineProperty(this, "alarm", {
      value: async (info?: unknown) => {
        this.wakes++;
        return alarm.call(this, info);
      },
    });
  }
  counted: () => number = () => 0;

  /** @returns whether `key` was already marked (and marks it, with `value`) */
  mark(key: string, value: number = 0): boolean {
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS marks (key TEXT PRIMARY KEY, value INTEGER)");
    const had = this.ctx.storage.sql.exec("SELECT 1 FROM marks WHERE key = ?", key).toArray().length > 0;
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO marks (key, value) VALUES (?, ?)", key, value);
    return had;
  }

  async #until(runIds: string[]): Promise<void> {
    for (const runId of runIds) while ((await this.tasks.get(runId))?.state !== "completed") await pause(1);
  }

  async fetch(request: Request): Promise<Response> {
    await this.start();
    const url = new URL(request.url);
    const action = url.pathname.split("/")[3];
    const n = Number(url.searchParams.get("n") ?? 1);
    if (action === "steps") {
      // A one-step run first: tables and indexes exist before the measured run, as on an object in use.
      const warm = await this.tasks.run("one", null);
      await this.#until([warm.runId]);
      const rowsBefore = this.rows + this.counted();
      const wakesBefore = this.wakes;
      const t = Date.now();
      const { runId } = await this.tasks.run("steps", { n });
      await this.#until([runId]);
      return Response.json({ ms: Date.now() - t, rows: this.rows + this.counted() - rowsBefore, wakes: this.wakes - wakesBefore });
    }
    if (action === "many") {
      const wakesBefore = this.wakes;
      const t = Date.now();
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await this.tasks.run("one", null)).runId);
      await this.#until(ids);
      return Response.json({ ms: Date.now() - t, wakes: this.wakes - wakesBefore });
    }
    if (action === "crash") {
      const { runId } = await this.tasks.run("crash", null, { runId: "crash" });
      await this.#until([runId]);
      return Response.json({ unreachable: true });
    }
    if (action === "recovered") {
      const t = Number(url.searchParams.get("t"));
      for (let i = 0; i < 20_000; i++) {
        const row = this.ctx.storage.sql.exec<{ value: number }>("SELECT value FROM marks WHERE key = 'recovered'").toArray()[0];
        if (row) return Response.json({ ms: row.value - t });
        await pause(1);
      }
      return Response.json({ ms: null });
    }
    return new Response("not found", { status: 404 });
  }
}

export class DokitTasks extends BenchHost {
  readonly tasks = new Tasks({ definitions: definitions(this) as never }) as unknown as Handle & Tasks;
  readonly lifecycle = Lifecycle.install(this, { delegates: ["fetch"] }).use(this.tasks as unknown as Tasks);
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.count();
  }
  start(): Promise<void> {
    return this.lifecycle.start();
  }
}

export class RefTasks extends BenchHost {
  readonly tasks = new RefTasksCapability({ definitions: definitions(this) as never }) as unknown as Handle & RefTasksCapability;
  readonly lifecycle = RefLifecycle.install(this as never).use(this.tasks as unknown as RefTasksCapability);
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.count();
  }
  start(): Promise<void> {
    return this.lifecycle.start();
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const [, impl, name] = new URL(request.url).pathname.split("/");
    const namespace = impl === "dokit" ? env.DOKIT_TASKS : impl === "ref" ? env.REF_TASKS : undefined;
    if (!namespace || !name) return new Response("/<dokit|ref>/<name>/<action>", { status: 404 });
    return namespace.getByName(name).fetch(request);
  },
} satisfies ExportedHandler<Env>;
