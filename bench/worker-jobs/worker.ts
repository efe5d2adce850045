// Two objects doing the same work: `n` jobs due now, each running a callback
// that bumps a counter row. RawJobs is the floor: its own table with an index on
// the due time and an alarm() that loops over it (select next, run, delete).
// DokitJobs uses Scheduler from dokit/schedule. Both drain through their alarm
// entry point, called directly so the platform's alarm latency is not measured;
// no platform alarm is left armed while the jobs wait (a fired alarm would race
// the measured drain).
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "dokit/lifecycle";
import { Scheduler } from "dokit/schedule";

interface Env {
  RAW_JOBS: DurableObjectNamespace<RawJobs>;
  DOKIT_JOBS: DurableObjectNamespace<DokitJobs>;
}

function bump(sql: SqlStorage, by: unknown): void {
  sql.exec("UPDATE counter SET n = n + 1, last = ? WHERE id = 1", JSON.stringify(by));
}

function counterTable(sql: SqlStorage): void {
  sql.exec("CREATE TABLE IF NOT EXISTS counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, last TEXT)");
  sql.exec("INSERT OR IGNORE INTO counter (id, n) VALUES (1, 0)");
}

export class RawJobs extends DurableObject<Env> {
  readonly sql = this.ctx.storage.sql;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    counterTable(this.sql);
    this.sql.exec("CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, callback TEXT NOT NULL, payload TEXT, due INTEGER NOT NULL)");
    this.sql.exec("CREATE INDEX IF NOT EXISTS jobs_due ON jobs(due)");
  }

  async schedule(n: number, dueInMs: number): Promise<void> {
    const now = Date.now();
    for (let i = 0; i < n; i++) this.sql.exec("INSERT INTO jobs (id, callback, payload, due) VALUES (?, 'tick', ?, ?)", crypto.randomUUID(), JSON.stringify({ i }), now + dueInMs + i);
    // A real object would set its alarm for the first job here; drain() runs alarm() itself.
  }

  async alarm(): Promise<void> {
    for (;;) {
      const job = this.sql.exec<{ id: string; payload: string; due: number }>("SELECT id, payload, due FROM jobs ORDER BY due LIMIT 1").toArray()[0];
      if (!job) return void (await this.ctx.storage.deleteAlarm());
      if (job.due > Date.now()) return void (await this.ctx.storage.setAlarm(job.due));
      bump(this.sql, JSON.parse(job.payload));
      this.sql.exec("DELETE FROM jobs WHERE id = ?", job.id);
    }
  }

  async drain(): Promise<number> {
    await this.alarm();
    return this.sql.exec<{ n: number }>("SELECT n FROM counter").one().n;
  }

  rows(): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM jobs").one().n;
  }

  /** An empty call: the round trip that drain()'s time includes. */
  ping(): null {
    return null;
  }
}

export class DokitJobs extends DurableObject<Env> {
  readonly scheduler = new Scheduler({ callbacks: { tick: (payload: { i: number }) => bump(this.ctx.storage.sql, payload) } });
  readonly lifecycle = Lifecycle.install(this).use(this.scheduler);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    counterTable(ctx.storage.sql);
  }

  async schedule(n: number, dueInMs: number): Promise<void> {
    await this.lifecycle.start();
    // A delay in seconds (a Date in the past is refused): 0 means due now.
    for (let i = 0; i < n; i++) await this.scheduler.set(Math.max(0, dueInMs + i) / 1000, "tick", { i });
    // The Scheduler armed the platform alarm for the first job: drain() runs it instead.
    await this.ctx.storage.deleteAlarm();
  }

  async drain(): Promise<number> {
    // The installed alarm entry point: the shared alarm rule, then the Scheduler's runner.
    await (this as unknown as { alarm(): Promise<void> }).alarm();
    return this.ctx.storage.sql.exec<{ n: number }>("SELECT n FROM counter").one().n;
  }

  rows(): number {
    return this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM dokit_schedules").one().n;
  }

  /** An empty call: the round trip that drain()'s time includes. */
  ping(): null {
    return null;
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    // /{raw|dokit}/{name}/{schedule|drain|rows|ping}?n=&due=
    const url = new URL(request.url);
    const [, impl, name, op] = url.pathname.split("/");
    const ns = impl === "raw" ? env.RAW_JOBS : env.DOKIT_JOBS;
    const stub = (ns as DurableObjectNamespace<RawJobs | DokitJobs>).get(ns.idFromName(name ?? "x")) as unknown as {
      schedule(n: number, due: number): Promise<void>;
      drain(): Promise<number>;
      rows(): Promise<number>;
      ping(): Promise<null>;
    };
    const n = Number(url.searchParams.get("n") ?? 0);
    if (op === "schedule") return Response.json((await stub.schedule(n, Number(url.searchParams.get("due") ?? 0))) ?? null);
    if (op === "drain") return Response.json(await stub.drain());
    if (op === "rows") return Response.json(await stub.rows());
    if (op === "ping") return Response.json(await stub.ping());
    return new Response("not found", { status: 404 });
  },
};
