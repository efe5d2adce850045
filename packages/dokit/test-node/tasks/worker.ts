// A worker with one Tasks object, over HTTP: `POST /start/<name>` starts the run "crash" on
// object <name>; `GET /run/<name>` answers `{ run, journal }` (the run, and what its steps did).
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";
import { Tasks, type TaskStep } from "../../src/tasks";

type Env = { RUNS: DurableObjectNamespace<CrashRuns> };

export class CrashRuns extends DurableObject<Env> {
  readonly tasks = new Tasks({
    definitions: {
      crash: async (_: null, step: TaskStep) => {
        const one = await step.do("one", () => this.note({ step: "one" }));
        // The first attempt of "two" takes a minute: the test kills the process during it.
        const two = await step.do("two", async ({ attempt, idempotencyKey }) => {
          this.note({ step: "two", attempt, idempotencyKey, interrupted: step.interrupted });
          if (attempt === 1) await new Promise((resolve) => setTimeout(resolve, 60_000));
          return attempt;
        });
        const three = await step.do("three", () => this.note({ step: "three" }));
        return [one, two, three];
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.tasks);

  note(entry: Record<string, unknown>): number {
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS journal (n INTEGER PRIMARY KEY, entry TEXT)");
    return this.ctx.storage.sql.exec<{ n: number }>("INSERT INTO journal (entry) VALUES (?) RETURNING n", JSON.stringify(entry)).one().n;
  }

  async start(): Promise<string> {
    await this.lifecycle.start();
    return (await this.tasks.run("crash", null, { runId: "the-run" })).runId;
  }

  async look(): Promise<string> {
    await this.lifecycle.start();
    const journal = this.ctx.storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'journal'").toArray().length
      ? this.ctx.storage.sql.exec<{ entry: string }>("SELECT entry FROM journal ORDER BY n").toArray().map((row) => JSON.parse(row.entry))
      : [];
    return JSON.stringify({ run: await this.tasks.get("the-run"), journal });
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const [, action, name] = new URL(request.url).pathname.split("/");
    if (!name) return new Response("no name", { status: 400 });
    const stub = env.RUNS.getByName(name);
    if (action === "start" && request.method === "POST") return new Response(await stub.start());
    if (action === "run") return new Response(await stub.look(), { headers: { "content-type": "application/json" } });
    return new Response("not found", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
