// Times and sizes a schedule cannot have: refused before anything is stored,
// and a bad row written by other code never keeps the alarm from the others.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { DokitError } from "../../src/lifecycle";
const LATEST_ALARM_TIME = 9_223_372_036_854;
import { Queue } from "../../src/queue";
import { Scheduler } from "../../src/schedule";
const MAX_JOB_BYTES = 2_000_000;
import { captureConsole } from "../logs";
import { fresh } from "../helpers";

const timers = (label: string) => env.TIMERS.get(env.TIMERS.idFromName(fresh(label)));

describe("times the alarm cannot be set to", () => {
  const cases: [string, (s: Scheduler) => Promise<unknown>, string][] = [
    ["a delay of 1e300 seconds", (s) => s.set(1e300, "note", { text: "x" }), "INVALID_SCHEDULE"],
    ["a delay of 1e13 seconds", (s) => s.set(1e13, "note", { text: "x" }), "INVALID_SCHEDULE"],
    ["a delay of 8.64e15 seconds", (s) => s.set(8.64e15, "note", { text: "x" }), "INVALID_SCHEDULE"],
    ["a date after the latest alarm time", (s) => s.set(new Date(LATEST_ALARM_TIME + 1), "note", { text: "x" }), "INVALID_SCHEDULE"],
    ["the latest date JavaScript has", (s) => s.set(new Date(8.64e15), "note", { text: "x" }), "INVALID_SCHEDULE"],
    ["an interval of 1e13 seconds", (s) => s.every(1e13, "note", { text: "x" }), "INVALID_SCHEDULE"],
    ["a retry delay of 1e300 ms", (s) => s.set(60, "note", { text: "x" }, { retry: { maxDelayMs: 1e300 } }), "INVALID_RETRY"],
  ];
  it.each(cases)("refuses %s with a code, storing nothing", async (_label, call, code) => {
    const stub = timers("range");
    await runInDurableObject(stub, async (instance, ctx) => {
      await instance.lifecycle.start();
      const error = await call(instance.scheduler as unknown as Scheduler).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DokitError);
      expect(error).toMatchObject({ code, message: expect.stringMatching(/^dokit: Scheduler: /) });
      expect(await instance.scheduler.list()).toEqual([]);
      expect(ctx.storage.sql.exec("SELECT count(*) AS n FROM dokit_schedules").one().n).toBe(0);
      expect(await ctx.storage.getAlarm()).toBeNull();
      expect(await ctx.storage.get("__dokit_alarms")).toBeUndefined();
    });
  });

  it("names the latest time in the error", async () => {
    const stub = timers("message");
    const error = await stub.set(1e300, "note", { text: "x" }).catch((e: unknown) => e);
    expect(String(error)).toContain("after the latest time an alarm can be set, 2262-04-11T23:47:16.854Z");
  });

  it("refuses a hung timeout the deadman alarm cannot be set to", () => {
    for (const hungTimeoutSeconds of [1e300, Number.POSITIVE_INFINITY, 0, -1, 86_401]) {
      expect(() => new Scheduler({ hungTimeoutSeconds })).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
      expect(() => new Queue({ hungTimeoutSeconds })).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    }
  });

  it("accepts the latest time an alarm can be set to", async () => {
    const stub = timers("latest");
    const schedule = await stub.set(new Date(LATEST_ALARM_TIME), "note", { text: "far" });
    expect(await stub.armedAt()).toBe(LATEST_ALARM_TIME);
    expect(await stub.cancel(schedule.id)).toBe(true);
  });

  it("sets aside a stored row the alarm cannot be armed for, and still runs the good ones", async () => {
    const stub = timers("bad-row");
    const logs = captureConsole();
    const good = await stub.set(60, "note", { text: "good" });
    // A row no dokit call can write (it refuses such times): as if written by other code.
    await runInDurableObject(stub, async (_instance, ctx) => {
      ctx.storage.sql.exec(
        "INSERT INTO dokit_schedules (id, callback, payload, due, spec, created) VALUES ('bad', 'note', '{\"text\":\"bad\"}', 1e303, '{\"type\":\"delayed\",\"delayInSeconds\":1e300}', 0)",
      );
    });
    await stub.backdate(good.id, 60_001);
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect((await stub.runs()).map((r) => r.payload)).toEqual([{ text: "good" }]));
    expect(await stub.get("bad")).toMatchObject({ failed: { error: expect.stringContaining("a time the alarm cannot be set to") } });
    expect(await stub.armedAt()).toBeNull();
    expect(logs.error.join("\n")).toContain('job "bad" (note) is due at 1e+303');
    // The alarm keeps working for later schedules.
    const later = await stub.set(60, "note", { text: "later" });
    await stub.backdate(later.id, 60_001);
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect((await stub.runs()).map((r) => r.payload)).toEqual([{ text: "good" }, { text: "later" }]));
  });
});

describe("rows the engine cannot read", () => {
  it("sets aside a row whose spec cannot be read, and still runs the good ones", async () => {
    const stub = timers("bad-spec");
    const logs = captureConsole();
    const good = await stub.set(60, "note", { text: "good" });
    await stub.backdate(good.id, 60_001);
    // A row no dokit call can write, due before the good one: as if written by other code.
    await runInDurableObject(stub, async (_instance, ctx) => {
      ctx.storage.sql.exec(
        "INSERT INTO dokit_schedules (id, callback, payload, due, spec, created) VALUES ('garbled', 'note', '{\"text\":\"bad\"}', 0, 'not json', 0)",
      );
    });
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect((await stub.runs()).map((r) => r.payload)).toEqual([{ text: "good" }]));
    await runInDurableObject(stub, async (_instance, ctx) => {
      const row = ctx.storage.sql.exec<{ failed: number; error: string }>("SELECT failed, error FROM dokit_schedules WHERE id = 'garbled'").one();
      expect(row).toMatchObject({ failed: 1, error: expect.stringContaining('job "garbled" (note) cannot be run') });
      expect(await ctx.storage.getAlarm()).toBeNull();
    });
    expect(logs.error.join("\n")).toContain('job "garbled" (note) cannot be run');
  });
});

describe("the shared alarm", () => {
  it("refuses a host setAlarm the runtime cannot arm, before storing it; dokit's work still runs", async () => {
    const stub = timers("host-range");
    const { id } = await stub.set(60, "note", { text: "mine" });
    for (const at of [1e300, Number.NaN, 8.64e15]) {
      const error = await stub.setHostAlarm(at).catch((e: unknown) => e);
      expect(error).toMatchObject({ message: expect.stringMatching(/^dokit: setAlarm: .* is not an alarm time/) });
    }
    const due = await stub.due(id);
    await runInDurableObject(stub, async (_instance, ctx) => {
      expect(await ctx.storage.get("__dokit_alarms")).toEqual({ work: { schedule: due } });
    });
    await stub.backdate(id, 60_001);
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect(await stub.runs()).toHaveLength(1));
    expect(await stub.hostRuns()).toEqual([]);
  });

  it("drops a stored time it cannot arm and arms the others", async () => {
    const stub = timers("stored-range");
    const logs = captureConsole();
    const { id } = await stub.set(60, "note", { text: "mine" });
    const due = await stub.due(id);
    await runInDurableObject(stub, async (_instance, ctx) => {
      await ctx.storage.put("__dokit_alarms", { work: { schedule: due, other: 1e303 }, host: 1e303 });
    });
    await stub.setHostAlarm(Date.now() + 3_600_000);
    await runInDurableObject(stub, async (_instance, ctx) => {
      expect(await ctx.storage.get("__dokit_alarms")).toMatchObject({ work: { schedule: due } });
      expect(await ctx.storage.getAlarm()).toBe(due);
    });
    expect(logs.error.join("\n")).toContain('dropped alarm work "other"');
  });
});

describe("payload size", () => {
  it(`refuses a payload that would make the row larger than SQLite takes (${MAX_JOB_BYTES} bytes), storing nothing`, async () => {
    const stub = timers("big");
    await runInDurableObject(stub, async (instance, ctx) => {
      await instance.lifecycle.start();
      const scheduler = instance.scheduler as unknown as Scheduler;
      for (const text of ["x".repeat(MAX_JOB_BYTES), "é".repeat(MAX_JOB_BYTES / 2), "x".repeat(3 * MAX_JOB_BYTES)]) {
        const error = await scheduler.set(60, "note", { text }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DokitError);
        expect(error).toMatchObject({ code: "INVALID_PAYLOAD", message: expect.stringMatching(/^dokit: Scheduler: the job takes \d+ bytes \(payload as JSON, id, callback, options\); at most 1983616 fit in one row, as SQLite refuses a row over 2 MB/) });
      }
      expect(await scheduler.list()).toEqual([]);
      expect(await ctx.storage.getAlarm()).toBeNull();
    });
  });

  it("stores and runs a payload just under the limit", async () => {
    const stub = timers("under");
    const text = "x".repeat(MAX_JOB_BYTES - 20_000);
    const { id } = await stub.set(60, "note", { text });
    await stub.backdate(id, 60_001);
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect(await stub.runs()).toHaveLength(1));
    expect((await stub.runs())[0]?.payload?.text).toHaveLength(text.length);
  });
});
