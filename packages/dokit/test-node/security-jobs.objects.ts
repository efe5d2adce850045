// Scenario object for scheduled and queued work over real HTTP requests
// (security-jobs.test.ts): a Scheduler and a Queue whose callbacks
// record their runs, driven through `…/jobs-host/<name>/<route>`.
import { DurableObject } from "cloudflare:workers";
import { isDokitError, Lifecycle } from "../src/lifecycle";
import { Queue } from "../src/queue";
import { Scheduler } from "../src/schedule";

/**
 * Routes: `POST /schedule?when=<seconds>` and `POST /push?bytes=<n>` answer
 * `{ ok, id }` or `{ ok: false, code, message }` (400; 500 with a null code for an error not dokit's); `GET /jobs` answers the
 * stored rows, the schedules, the runs and the armed alarm.
 */
export class JobsHost extends DurableObject<Env> {
  readonly scheduler = new Scheduler({
    callbacks: { tick: (payload: { n: number }) => this.#record("tick", payload) },
  });
  readonly queue = new Queue({
    callbacks: { work: (payload: string) => this.#record("work", payload.length) },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.scheduler).use(this.queue);

  async onRequest(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const route = url.pathname.split("/").pop();
    try {
      if (route === "schedule" && request.method === "POST") {
        const when = Number(url.searchParams.get("when"));
        const schedule = await this.scheduler.set(when, "tick", { n: when });
        return Response.json({ ok: true, id: schedule.id });
      }
      if (route === "push" && request.method === "POST") {
        const item = await this.queue.push("work", "x".repeat(Number(url.searchParams.get("bytes"))));
        return Response.json({ ok: true, id: item.id });
      }
    } catch (error) {
      // A DokitError is the caller's mistake (400); anything else is reported as it is (500).
      const code = isDokitError(error) ? error.code : null;
      return Response.json({ ok: false, code, message: (error as Error).message }, { status: code ? 400 : 500 });
    }
    if (route === "jobs") {
      const sql = this.ctx.storage.sql;
      const count = (table: string) =>
        sql.exec<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE name = ?", table).one().n === 0
          ? 0
          : sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${table}`).one().n;
      return Response.json({
        scheduleRows: count("dokit_schedules"),
        queueRows: count("dokit_queue"),
        schedules: await this.scheduler.list(),
        runs: count("runs") === 0 ? [] : sql.exec("SELECT kind, entry FROM runs ORDER BY n").toArray(),
        alarm: await this.ctx.storage.getAlarm(),
      });
    }
    return new Response("no route", { status: 404 });
  }

  #record(kind: string, entry: unknown): void {
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS runs (n INTEGER PRIMARY KEY, kind TEXT, entry TEXT)");
    this.ctx.storage.sql.exec("INSERT INTO runs (kind, entry) VALUES (?, ?)", kind, JSON.stringify(entry));
  }
}
