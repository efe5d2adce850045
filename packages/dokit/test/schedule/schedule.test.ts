import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { DokitError } from "../../src/lifecycle";
import { nextCronRun, Scheduler } from "../../src/schedule";
import { dueJobsQuery, nextJobQuery } from "../../src/jobs/job-table";
import type { Timers } from "./objects";
import { captureConsole } from "../logs";
import { fresh } from "../helpers";

const timers = (label: string) => env.TIMERS.get(env.TIMERS.idFromName(fresh(label)));
const MIN = 60_000;

/** Runs the alarm now (it may already have fired by itself, the due time being past). */
async function fire(stub: DurableObjectStub<Timers>): Promise<void> {
  await runDurableObjectAlarm(stub);
}

describe("one-shot schedules", () => {
  it("runs a delayed callback with its payload, in the object's context, once", async () => {
    const stub = timers("delay");
    const before = Date.now();
    const schedule = await stub.set(60, "note", { text: "hi" });
    expect(schedule).toMatchObject({ callback: "note", payload: { text: "hi" }, type: "delayed", delayInSeconds: 60 });
    expect(schedule.time).toBeGreaterThanOrEqual(Math.floor((before + MIN) / 1000));
    expect(await stub.get(schedule.id)).toEqual(schedule);
    expect(await stub.armedAt()).toBe(await stub.due(schedule.id));
    await stub.backdate(schedule.id, MIN + 1);
    await fire(stub);
    await vi.waitFor(async () => expect(await stub.runs()).toHaveLength(1));
    expect(await stub.runs()).toEqual([{ callback: "note", payload: { text: "hi" }, id: schedule.id, type: "delayed", agentOk: true }]);
    expect(await stub.get(schedule.id)).toBeUndefined();
    expect(await stub.armedAt()).toBeNull();
    expect(await stub.hostRuns()).toEqual([]);
  });

  it("runs at a date", async () => {
    const stub = timers("date");
    const at = new Date(Date.now() + 3_600_000);
    const schedule = await stub.set(at, "note", { text: "at" });
    expect(schedule).toMatchObject({ type: "scheduled", time: Math.floor(at.getTime() / 1000) });
    expect(await stub.due(schedule.id)).toBe(at.getTime());
    await stub.backdate(schedule.id, 3_600_001);
    await fire(stub);
    await vi.waitFor(async () => expect((await stub.runs()).map((r) => r.type)).toEqual(["scheduled"]));
  });

  it("cancels", async () => {
    const stub = timers("cancel");
    const { id } = await stub.set(60, "note", { text: "never" });
    expect(await stub.cancel(id)).toBe(true);
    expect(await stub.cancel(id)).toBe(false);
    expect(await stub.get(id)).toBeUndefined();
    expect(await stub.armedAt()).toBeNull();
  });

  it("replaces a schedule set again under a caller-chosen id, never duplicating it", async () => {
    const stub = timers("ids");
    await stub.set(60, "note", { text: "first" }, { id: "daily-report" });
    const second = await stub.set(120, "note", { text: "second" }, { id: "daily-report" });
    const list = await stub.list();
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: "daily-report", payload: { text: "second" }, delayInSeconds: 120 });
    expect(await stub.armedAt()).toBe(await stub.due("daily-report"));
    expect(second.id).toBe("daily-report");
  });

  it("reuses an identical recurring schedule (idempotent by default), and adds one-shots", async () => {
    const stub = timers("idempotent");
    const a = await stub.every(60, "note", { text: "tick" });
    const b = await stub.every(60, "note", { text: "tick" });
    const c = await stub.set("0 8 * * *", "note", { text: "morning" });
    const d = await stub.set("0 8 * * *", "note", { text: "morning" });
    expect(b.id).toBe(a.id);
    expect(d.id).toBe(c.id);
    await stub.set(60, "note", { text: "once" });
    await stub.set(60, "note", { text: "once" });
    expect(await stub.list()).toHaveLength(4);
  });

  it("keeps an identical recurring schedule set again under its id (as on every start), and replaces a changed one", async () => {
    const stub = timers("ids-recurring");
    const first = await stub.every(60, "note", { text: "tick" }, { id: "rollup" });
    await stub.backdate("rollup", 30_000);
    const again = await stub.every(60, "note", { text: "tick" }, { id: "rollup" });
    expect(again.time).toBe(first.time - 30);
    const changed = await stub.every(120, "note", { text: "tick" }, { id: "rollup" });
    expect(changed).toMatchObject({ id: "rollup", intervalSeconds: 120 });
    expect(await stub.list()).toHaveLength(1);
  });

  it("lists by kind and time range, the next first", async () => {
    const stub = timers("list");
    const late = await stub.set(7200, "note", { text: "late" });
    const early = await stub.set(60, "note", { text: "early" });
    const cron = await stub.set("*/5 * * * *", "note", { text: "cron" });
    const ids = (await stub.list()).map((s) => s.id);
    expect(ids.indexOf(early.id)).toBeLessThan(ids.indexOf(late.id));
    await runInDurableObject(stub, async (instance) => {
      expect((await instance.scheduler.list({ type: "cron" })).map((s) => s.id)).toEqual([cron.id]);
      const soon = await instance.scheduler.list({ timeRange: { end: new Date(Date.now() + 3_600_000) } });
      expect(soon.map((s) => s.id).sort()).toEqual([early.id, cron.id].sort());
      expect(await instance.scheduler.list({ id: late.id })).toHaveLength(1);
    });
  });
});

describe("cron", () => {
  it("computes the next run with an injected clock, in UTC by default", () => {
    const at = Date.UTC(2026, 0, 15, 7, 59, 30);
    expect(new Date(nextCronRun("0 8 * * *", at)).toISOString()).toBe("2026-01-15T08:00:00.000Z");
    // Strictly after: at the match itself, the next one.
    expect(new Date(nextCronRun("0 8 * * *", Date.UTC(2026, 0, 15, 8))).toISOString()).toBe("2026-01-16T08:00:00.000Z");
    expect(new Date(nextCronRun("*/15 * * * 1-5", Date.UTC(2026, 0, 17, 12))).toISOString()).toBe("2026-01-19T00:00:00.000Z");
  });

  it("reads the expression in a time zone, across DST changes", () => {
    const berlin = (after: string) => new Date(nextCronRun("0 8 * * *", Date.parse(after), "Europe/Berlin")).toISOString();
    // 08:00 local is 07:00Z in winter (CET) and 06:00Z in summer (CEST).
    expect(berlin("2026-03-28T12:00:00Z")).toBe("2026-03-29T06:00:00.000Z");
    expect(berlin("2026-03-27T12:00:00Z")).toBe("2026-03-28T07:00:00.000Z");
    expect(berlin("2026-10-24T12:00:00Z")).toBe("2026-10-25T07:00:00.000Z");
    // Spring forward (2026-03-29, 02:00 → 03:00 local): 02:30 does not exist that day and runs once, at 03:00 local.
    const skipped = (after: string) => new Date(nextCronRun("30 2 * * *", Date.parse(after), "Europe/Berlin")).toISOString();
    expect(skipped("2026-03-28T12:00:00Z")).toBe("2026-03-29T01:00:00.000Z");
    expect(skipped("2026-03-29T01:00:00Z")).toBe("2026-03-30T00:30:00.000Z");
    // Fall back (2026-10-25, 03:00 → 02:00 local): 02:30 happens twice and runs once, at its first occurrence.
    expect(skipped("2026-10-24T12:00:00Z")).toBe("2026-10-25T00:30:00.000Z");
    expect(skipped("2026-10-25T00:30:00Z")).toBe("2026-10-26T01:30:00.000Z");
    // New York, the US change (2026-03-08): 09:00 local moves from 14:00Z to 13:00Z.
    const ny = (after: string) => new Date(nextCronRun("0 9 * * *", Date.parse(after), "America/New_York")).toISOString();
    expect(ny("2026-03-07T15:00:00Z")).toBe("2026-03-08T13:00:00.000Z");
  });

  it("stores the next match and its time zone, then runs and moves to the following match", async () => {
    const stub = timers("cron");
    const schedule = await stub.set("*/5 * * * *", "note", { text: "five" }, { timeZone: "Asia/Tokyo" });
    expect(schedule).toMatchObject({ type: "cron", cron: "*/5 * * * *", timeZone: "Asia/Tokyo" });
    const due = (await stub.due(schedule.id)) as number;
    expect(due % (5 * MIN)).toBe(0);
    expect(due).toBeGreaterThan(Date.now());
    const backdated = (await stub.backdate(schedule.id, due - Date.now() + 1000)) as number;
    await fire(stub);
    await vi.waitFor(async () => expect(await stub.runs()).toHaveLength(1));
    const next = (await stub.due(schedule.id)) as number;
    expect(next).toBeGreaterThan(backdated);
    expect(next % (5 * MIN)).toBe(0);
    expect(await stub.armedAt()).toBe(next);
  });

  it("fires a missed cron run once after downtime, then the next match in the future", async () => {
    const stub = timers("cron-missed");
    const { id } = await stub.set("* * * * *", "note", { text: "minutely" });
    await stub.backdate(id, 3 * 60 * MIN); // three hours of missed minutes
    await fire(stub);
    await vi.waitFor(async () => expect(await stub.runs()).toHaveLength(1));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await stub.runs()).toHaveLength(1);
    const next = (await stub.due(id)) as number;
    expect(next).toBeGreaterThan(Date.now());
    expect(next - Date.now()).toBeLessThanOrEqual(MIN);
  });
});

describe("every", () => {
  it("does not drift: the next run is the previous due time plus the interval, not the run time plus it", async () => {
    const stub = timers("every");
    const schedule = await stub.every(60, "note", { text: "tick" });
    expect(schedule).toMatchObject({ type: "interval", intervalSeconds: 60 });
    const first = (await stub.due(schedule.id)) as number;
    // The alarm runs 1.5 s late.
    const late = (await stub.backdate(schedule.id, MIN + 1500)) as number;
    expect(late).toBe(first - MIN - 1500);
    await fire(stub);
    await vi.waitFor(async () => expect(await stub.runs()).toHaveLength(1));
    expect(await stub.due(schedule.id)).toBe(late + MIN);
    expect(await stub.armedAt()).toBe(late + MIN);
  });

  it("fires a missed run once after downtime, then stays on its grid", async () => {
    const stub = timers("every-missed");
    const { id } = await stub.every(60, "note", { text: "tick" });
    const late = (await stub.backdate(id, 11 * MIN + 500)) as number; // ten slots missed
    await fire(stub);
    await vi.waitFor(async () => expect(await stub.runs()).toHaveLength(1));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await stub.runs()).toHaveLength(1);
    const next = (await stub.due(id)) as number;
    expect(next).toBeGreaterThan(Date.now());
    expect(next - Date.now()).toBeLessThanOrEqual(MIN);
    expect((next - late) % MIN).toBe(0);
  });
});

describe("bad input", () => {
  const cases: [string, (s: Scheduler) => Promise<unknown>, string][] = [
    ["an unknown callback", (s) => s.set(60, "nope"), "UNKNOWN_CALLBACK"],
    ["an inherited name", (s) => s.set(60, "toString"), "UNKNOWN_CALLBACK"],
    ["a past date", (s) => s.set(new Date(Date.now() - 1000), "note", { text: "x" }), "INVALID_SCHEDULE"],
    ["an invalid date", (s) => s.set(new Date("nope"), "note", { text: "x" }), "INVALID_SCHEDULE"],
    ["a negative delay", (s) => s.set(-1, "note", { text: "x" }), "INVALID_SCHEDULE"],
    ["a NaN delay", (s) => s.set(Number.NaN, "note", { text: "x" }), "INVALID_SCHEDULE"],
    ["a 4-field cron", (s) => s.set("* * * *", "note", { text: "x" }), "INVALID_SCHEDULE"],
    ["a 6-field cron", (s) => s.set("0 * * * * *", "note", { text: "x" }), "INVALID_SCHEDULE"],
    ["a cron out of range", (s) => s.set("61 * * * *", "note", { text: "x" }), "INVALID_SCHEDULE"],
    ["an unknown time zone", (s) => s.set("0 8 * * *", "note", { text: "x" }, { timeZone: "Mars/Olympus" }), "INVALID_SCHEDULE"],
    ["a zero interval", (s) => s.every(0, "note", { text: "x" }), "INVALID_SCHEDULE"],
    ["a BigInt payload", (s) => s.set(60, "note", { text: 1n } as never), "INVALID_PAYLOAD"],
    ["a cyclic payload", (s) => s.set(60, "note", cyclic() as never), "INVALID_PAYLOAD"],
    ["a function payload", (s) => s.set(60, "note", (() => 1) as never), "INVALID_PAYLOAD"],
    ["zero attempts", (s) => s.set(60, "note", { text: "x" }, { retry: { maxAttempts: 0 } }), "INVALID_RETRY"],
    ["a negative delay in retry", (s) => s.set(60, "note", { text: "x" }, { retry: { baseDelayMs: -1 } }), "INVALID_RETRY"],
    ["an empty id", (s) => s.set(60, "note", { text: "x" }, { id: "" }), "INVALID_ARGUMENT"],
  ];
  it.each(cases)("refuses %s with a code, storing nothing", async (_label, call, code) => {
    const stub = timers("bad");
    await runInDurableObject(stub, async (instance, ctx) => {
      await instance.lifecycle.start();
      const error = await call(instance.scheduler as unknown as Scheduler).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DokitError);
      expect((error as DokitError).code).toBe(code);
      expect((error as DokitError).message).toMatch(/^dokit: Scheduler/);
      expect(await instance.scheduler.list()).toEqual([]);
      expect(await ctx.storage.getAlarm()).toBeNull();
    });
  });

  it("refuses a bad default retry policy at construction", () => {
    expect(() => new Scheduler({ retry: { baseDelayMs: 5000, maxDelayMs: 10 } })).toThrow(expect.objectContaining({ code: "INVALID_RETRY" }));
  });

  it("refuses any name on a Scheduler without callbacks", async () => {
    const stub = env.UNTYPED.get(env.UNTYPED.idFromName(fresh("untyped")));
    await runInDurableObject(stub, async (instance) => {
      const error = await instance.scheduler.set(60, "anything").catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "UNKNOWN_CALLBACK", message: expect.stringMatching(/no callback named "anything"/) });
    });
  });
});

function cyclic(): unknown {
  const a: Record<string, unknown> = {};
  a.self = a;
  return a;
}

describe("retries and failures", () => {
  it("retries with growing, jittered backoff, then calls onError and drops the schedule", async () => {
    const stub = timers("retry");
    const { id } = await stub.set(60, "fail", { why: "down" });
    const backoffs: number[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      const due = (await stub.due(id)) as number;
      await stub.backdate(id, due - Date.now() + 10);
      const before = Date.now();
      await fire(stub);
      await vi.waitFor(async () => expect(await stub.runs()).toHaveLength(attempt));
      if (attempt < 3) backoffs.push(((await stub.due(id)) as number) - before);
    }
    // baseDelayMs 60 s: the first wait lies in [30 s, 60 s], the second in [60 s, 120 s] ("equal jitter").
    expect(backoffs[0]).toBeGreaterThanOrEqual(30_000 - 1000);
    expect(backoffs[0]).toBeLessThanOrEqual(60_000 + 1000);
    expect(backoffs[1]).toBeGreaterThanOrEqual(60_000 - 1000);
    expect(backoffs[1]).toBeLessThanOrEqual(120_000 + 1000);
    await vi.waitFor(async () => expect(await stub.errors()).toEqual([{ message: "failing: down", id, callback: "fail" }]));
    expect(await stub.get(id)).toBeUndefined();
    expect(await stub.armedAt()).toBeNull();
  });

  it("records the failed attempt and its error on the row while it waits", async () => {
    const stub = timers("retry-row");
    const { id } = await stub.set(60, "fail", { why: "flaky" });
    await stub.backdate(id, MIN + 10);
    await fire(stub);
    await vi.waitFor(async () => expect(await stub.runs()).toHaveLength(1));
    await runInDurableObject(stub, (_i, ctx) => {
      const row = ctx.storage.sql.exec("SELECT attempts, error FROM dokit_schedules WHERE id = ?", id).one();
      expect(row).toEqual({ attempts: 1, error: "failing: flaky" });
    });
  });

  it("does not block the jobs due behind a failing one", async () => {
    const stub = timers("isolation");
    const bad = await stub.set(60, "fail", { why: "x" });
    const good = await stub.set(61, "note", { text: "after" });
    await stub.backdate(bad.id, MIN + 2000);
    await stub.backdate(good.id, MIN + 2000);
    await fire(stub);
    await vi.waitFor(async () => expect((await stub.runs()).map((r) => r.callback)).toEqual(["fail", "note"]));
  });

  it("runs the jobs due in one run as an earlier job left them: a cancelled one not at all, a replaced one as replaced", async () => {
    const stub = timers("changed-mid-run");
    const doomed = await stub.set(61, "note", { text: "cancelled" });
    const moved = await stub.set(63, "note", { text: "old" });
    const due = [
      await stub.set(60, "cancelOther", { id: doomed.id }),
      doomed,
      await stub.set(62, "replaceOther", { id: moved.id, text: "new" }),
      moved,
      await stub.set(64, "note", { text: "last" }),
    ];
    // All five are due at once, in this order: one run takes them.
    for (const { id } of due) await stub.backdate(id, 10 * MIN);
    await fire(stub);
    await vi.waitFor(async () => expect(await stub.list()).toHaveLength(1));
    expect((await stub.runs()).map((r) => r.payload)).toEqual([{ text: "last" }]);
    const [replaced] = await stub.list();
    expect(replaced).toMatchObject({ id: moved.id, payload: { text: "new" }, type: "delayed", delayInSeconds: 3600 });
  });

  it("keeps a one-shot that failed its last attempt when keepFailed is set, and never runs it again", async () => {
    const logs = captureConsole();
    const stub = env.KEEPING.get(env.KEEPING.idFromName(fresh("keep")));
    const { id } = await stub.set(60, "fail", { why: "gone" });
    await stub.backdate(id, MIN + 10);
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect((await stub.get(id))?.failed).toEqual({ error: "failing: gone", attempts: 1 }));
    expect(await stub.armedAt()).toBeNull();
    expect(await stub.runs()).toHaveLength(1);
    // Without onError, the last failure is logged once.
    expect(logs.error).toEqual([expect.stringMatching(/^dokit: Scheduler job "[\w-]+" \(fail\) failed its last attempt Error: failing: gone/)]);
  });
});

describe("at least once", () => {
  it("runs a job again when its instance died while it ran (the deadman alarm)", { timeout: 30_000 }, async () => {
    const name = fresh("evicted");
    // A stub that saw its object reset stays broken: take a fresh one for each call.
    const stub = () => env.HANGING.get(env.HANGING.idFromName(name));
    const { id } = await stub().set(60, "hang", { n: 1 });
    await stub().backdate(id, MIN + 10);
    // The alarm fires by itself (its time is past); the first run resets the instance.
    await vi.waitFor(async () => expect(await stub().runs()).toHaveLength(1), { timeout: 15_000, interval: 200 });
    expect(await stub().starts()).toBe(2);
    expect(await stub().get(id)).toBeUndefined();
    expect(await stub().armedAt()).toBeNull();
  });
});

describe("the one alarm", () => {
  it("runs a job whose time only its table holds (nothing stored for it, as for a host that gained onAlarm in a deployment)", async () => {
    const stub = timers("table-only");
    const { id } = await stub.set(3600, "note", { text: "job" });
    const at = Date.now() - 1000;
    await runInDurableObject(stub, async (_instance, ctx) => {
      ctx.storage.sql.exec("UPDATE dokit_schedules SET due = ? WHERE id = ?", at, id);
      await ctx.storage.delete("__dokit_alarms");
      await (Object.getPrototypeOf(ctx.storage) as DurableObjectStorage).setAlarm.call(ctx.storage, at);
    });
    await evictDurableObject(stub);
    // The fresh instance finds no stored time for the Scheduler's key and reads it from the table.
    await fire(stub);
    await vi.waitFor(async () => expect(await stub.runs()).toHaveLength(1));
    expect(await stub.hostRuns()).toEqual([]);
  });

  it("keeps the host's own later alarm: jobs run first, the host's onAlarm at its time", async () => {
    const stub = timers("host-later");
    const hostAt = Date.now() + 3_600_000;
    await stub.setHostAlarm(hostAt);
    const { id } = await stub.set(60, "note", { text: "job" });
    expect(await stub.armedAt()).toBe(await stub.due(id));
    await stub.backdate(id, MIN + 10);
    await fire(stub);
    await vi.waitFor(async () => expect(await stub.runs()).toHaveLength(1));
    expect(await stub.hostRuns()).toEqual([]);
    expect(await stub.armedAt()).toBe(hostAt);
    await runDurableObjectAlarm(stub);
    expect(await stub.hostRuns()).toEqual([{ agentOk: true }]);
  });

  it("runs the host's earlier alarm and keeps the jobs for later", async () => {
    const stub = timers("host-earlier");
    const { id } = await stub.set(3600, "note", { text: "later" });
    await stub.setHostAlarm(Date.now() + 60_000);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.hostRuns()).toEqual([{ agentOk: true }]);
    expect(await stub.runs()).toEqual([]);
    expect(await stub.armedAt()).toBe(await stub.due(id));
  });

  it("holds 10 000 schedules on one alarm; the next due is one index seek", { timeout: 60_000 }, async () => {
    const stub = timers("many");
    await runInDurableObject(stub, async (instance, ctx) => {
      await instance.lifecycle.start();
      for (let i = 0; i < 10_000; i++) await instance.scheduler.set(60 + i, "note", { text: `n${i}` });
      const alarms = await ctx.storage.get<{ work: Record<string, number> }>("__dokit_alarms");
      expect(Object.keys(alarms?.work ?? {})).toEqual(["schedule"]);
      const first = ctx.storage.sql.exec<{ due: number }>("SELECT min(due) AS due FROM dokit_schedules").one().due;
      expect(await ctx.storage.getAlarm()).toBe(first);
      const cursor = ctx.storage.sql.exec(nextJobQuery("dokit_schedules", "due"));
      cursor.toArray();
      expect(cursor.rowsRead).toBeLessThanOrEqual(2);
      const plan = ctx.storage.sql.exec(`EXPLAIN QUERY PLAN ${nextJobQuery("dokit_schedules", "due")}`).toArray();
      expect(JSON.stringify(plan)).toMatch(/USING INDEX dokit_schedules_next/);
      expect(JSON.stringify(plan)).not.toMatch(/TEMP B-TREE/);
      // The run reads the due jobs ahead in one range of the same index (none is due yet).
      const take = ctx.storage.sql.exec(dueJobsQuery("dokit_schedules", "due"), Date.now());
      expect(take.toArray()).toEqual([]);
      expect(take.rowsRead).toBeLessThanOrEqual(1);
      const takePlan = JSON.stringify(ctx.storage.sql.exec(`EXPLAIN QUERY PLAN ${dueJobsQuery("dokit_schedules", "due")}`, 0).toArray());
      expect(takePlan).toMatch(/USING INDEX dokit_schedules_next/);
      expect(takePlan).not.toMatch(/TEMP B-TREE/);
    });
    // Three come due: exactly those run, the rest wait on the same alarm.
    const ids = (await runInDurableObject(stub, (_i, ctx) => ctx.storage.sql.exec<{ id: string }>("SELECT id FROM dokit_schedules ORDER BY due LIMIT 3").toArray())).map((r) => r.id);
    for (const id of ids) await stub.backdate(id, 10 * MIN);
    await fire(stub);
    await vi.waitFor(async () => expect(await stub.runs()).toHaveLength(3));
    const left = await runInDurableObject(stub, (_i, ctx) => ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM dokit_schedules").one().n);
    expect(left).toBe(9_997);
  });
});

describe("adopting the reference's schedules", () => {
  it("moves registered rows of cf_agents_schedules and cf_agents_jobs into the Scheduler, and leaves the rest in place", async () => {
    const stub = timers("adopt");
    const now = Date.now();
    const inAMinute = Math.floor(now / 1000) + 60;
    const warnings: string[] = [];
    await runInDurableObject(stub, async (instance, ctx) => {
      const sql = ctx.storage.sql;
      sql.exec(`CREATE TABLE cf_agents_schedules (id TEXT PRIMARY KEY NOT NULL, callback TEXT, payload TEXT,
        type TEXT NOT NULL CHECK(type IN ('scheduled', 'delayed', 'cron', 'interval')), time INTEGER, delayInSeconds INTEGER,
        cron TEXT, intervalSeconds INTEGER, running INTEGER DEFAULT 0, retry_options TEXT, created_at INTEGER DEFAULT (unixepoch()))`);
      const legacy = (id: string, callback: string, payload: string | null, type: string, extra: Record<string, SqlStorageValue> = {}) =>
        sql.exec(
          "INSERT INTO cf_agents_schedules (id, callback, payload, type, time, delayInSeconds, cron, intervalSeconds, retry_options) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
          id, callback, payload, type, inAMinute, extra.delayInSeconds ?? null, extra.cron ?? null, extra.intervalSeconds ?? null, extra.retry_options ?? null,
        );
      legacy("old-delayed", "note", '{"text":"old"}', "delayed", { delayInSeconds: 60, retry_options: '{"maxAttempts":5}' });
      legacy("old-cron", "note", '{"text":"cron"}', "cron", { cron: "0 8 * * *" });
      legacy("old-interval", "note", null, "interval", { intervalSeconds: 30 });
      legacy("old-unknown", "renamedMethod", "{}", "delayed", { delayInSeconds: 60 });
      legacy("old-bad-json", "note", "{nope", "delayed", { delayInSeconds: 60 });
      sql.exec(`CREATE TABLE cf_agents_jobs (id TEXT PRIMARY KEY NOT NULL, capability TEXT NOT NULL, fn TEXT NOT NULL, time INTEGER NOT NULL,
        payload TEXT, retry_options TEXT, singleflight INTEGER NOT NULL DEFAULT 0, hung_timeout_seconds INTEGER, exclusive INTEGER NOT NULL DEFAULT 0,
        recovery_loop INTEGER NOT NULL DEFAULT 0, running INTEGER NOT NULL DEFAULT 0, execution_started_at INTEGER,
        created_at INTEGER NOT NULL DEFAULT (unixepoch())) WITHOUT ROWID`);
      sql.exec("INSERT INTO cf_agents_jobs (id, capability, fn, time, payload) VALUES (?, 'scheduler', 'note', ?, ?)", "job-at", now + 120_000, '{"payload":{"text":"job"},"type":"scheduled"}');
      sql.exec("INSERT INTO cf_agents_jobs (id, capability, fn, time, payload) VALUES (?, 'queue', 'send', ?, ?)", "queue-item", now, '{"payload":1}');
      const warn = console.warn;
      console.warn = (...args: unknown[]) => void warnings.push(args.map(String).join(" "));
      try {
        await instance.lifecycle.start();
      } finally {
        console.warn = warn;
      }
      const list = await instance.scheduler.list();
      expect(Object.fromEntries(list.map((s) => [s.id, s]))).toMatchObject({
        "old-delayed": { callback: "note", payload: { text: "old" }, type: "delayed", delayInSeconds: 60, time: inAMinute, retry: { maxAttempts: 5 } },
        "old-cron": { type: "cron", cron: "0 8 * * *", time: inAMinute },
        "old-interval": { type: "interval", intervalSeconds: 30 },
        "job-at": { type: "scheduled", payload: { text: "job" }, time: Math.floor((now + 120_000) / 1000) },
      });
      expect(list).toHaveLength(4);
      // Left in place, and reported: an unregistered callback, a payload that is not JSON, another capability's job.
      expect(sql.exec("SELECT id FROM cf_agents_schedules ORDER BY id").toArray().map((r) => r.id)).toEqual(["old-bad-json", "old-unknown"]);
      expect(sql.exec("SELECT id FROM cf_agents_jobs").toArray().map((r) => r.id)).toEqual(["queue-item"]);
      expect(await ctx.storage.getAlarm()).toBe(inAMinute * 1000);
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/left 2 in place: .*old-unknown: no callback named "renamedMethod".*old-bad-json: its payload is not valid JSON|old-bad-json.*old-unknown/);
  });
});
