import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { DokitError } from "../../src/lifecycle";
import { Queue } from "../../src/queue";
import { dueJobsQuery, nextJobQuery, TAKE_BATCH } from "../../src/jobs/job-table";
import { fresh } from "../helpers";

const work = (label: string) => env.WORK.get(env.WORK.idFromName(fresh(label)));

describe("Queue", () => {
  it("runs items after the request that pushed them, one at a time, in push order, in the object's context", async () => {
    const stub = work("order");
    const { ids, ranDuringRequest } = await stub.pushSteps(1, 5);
    expect(ranDuringRequest).toBe(0);
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect((await stub.runs()).map((r) => r.n)).toEqual([1, 2, 3, 4, 5]));
    expect((await stub.runs()).map((r) => r.id)).toEqual(ids);
    expect((await stub.runs()).every((r) => r.agentOk)).toBe(true);
    expect(await stub.pending()).toEqual([]);
  });

  it("lists, gets, removes and clears items that have not run", async () => {
    const stub = work("list");
    await runInDurableObject(stub, async (instance) => {
      await instance.lifecycle.start();
      const q = instance.queue;
      const pushedFrom = Math.floor(Date.now() / 1000);
      const a = await q.push("step", { n: 1 });
      const pushedBy = Math.floor(Date.now() / 1000);
      const b = await q.push("boom", { n: 2 });
      const c = await q.push("step", { n: 3 });
      expect((await q.list()).map((i) => i.id)).toEqual([a.id, b.id, c.id]);
      expect(await q.list({ callback: "boom" })).toEqual([b]);
      expect(await q.get(a.id)).toEqual(a);
      // The push time in seconds (read around the push: the clock may cross a second meanwhile).
      expect(a).toMatchObject({ callback: "step", payload: { n: 1 } });
      expect(a.createdAt).toBeGreaterThanOrEqual(pushedFrom);
      expect(a.createdAt).toBeLessThanOrEqual(pushedBy);
      expect(await q.remove(a.id)).toBe(true);
      expect(await q.remove(a.id)).toBe(false);
      expect(await q.clear("boom")).toBe(1);
      expect((await q.list()).map((i) => i.id)).toEqual([c.id]);
      expect(await q.clear()).toBe(1);
      expect(await q.list()).toEqual([]);
    });
  });

  it("replaces an item pushed again under its id, in place (it keeps its turn)", async () => {
    const stub = work("replace");
    await runInDurableObject(stub, async (instance) => {
      await instance.lifecycle.start();
      const q = instance.queue;
      await q.push("step", { n: 1 }, { id: "first" });
      await q.push("step", { n: 2 });
      await q.push("step", { n: 10 }, { id: "first" });
      expect((await q.list()).map((i) => [i.id === "first" ? "first" : "other", (i.payload as { n: number }).n])).toEqual([
        ["first", 10],
        ["other", 2],
      ]);
    });
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect((await stub.runs()).map((r) => r.n)).toEqual([10, 2]));
  });

  it("isolates a failing item: it is retried, then goes to onError and is dropped; the items behind it run", async () => {
    const stub = work("isolation");
    await stub.push("step", 1);
    const bad = await stub.push("boom", 2);
    await stub.push("step", 3);
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect(await stub.runs()).toHaveLength(4), { timeout: 5000 });
    expect((await stub.runs()).map((r) => r.n)).toEqual([1, 2, 2, 3]);
    expect(await stub.errors()).toEqual([{ message: "boom 2", id: bad.id, agentOk: true }]);
    expect(await stub.pending()).toEqual([]);
  });

  it("refuses bad input with a code, storing nothing", async () => {
    const stub = work("bad");
    await runInDurableObject(stub, async (instance, ctx) => {
      await instance.lifecycle.start();
      const q = instance.queue as unknown as Queue;
      for (const [call, code] of [
        [() => q.push("nope"), "UNKNOWN_CALLBACK"],
        [() => q.push("constructor"), "UNKNOWN_CALLBACK"],
        [() => q.push("step", () => 1), "INVALID_PAYLOAD"],
        [() => q.push("step", { n: 1n }), "INVALID_PAYLOAD"],
        [() => q.push("step", { n: 1 }, { retry: { maxAttempts: 1.5 } }), "INVALID_RETRY"],
        [() => q.push("step", { n: 1 }, { id: "x".repeat(300) }), "INVALID_ARGUMENT"],
      ] as const) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DokitError);
        expect((error as DokitError).code).toBe(code);
      }
      expect(await q.list()).toEqual([]);
      expect(await ctx.storage.getAlarm()).toBeNull();
    });
  });

  it("finds the next item with one index seek", async () => {
    const stub = work("index");
    await runInDurableObject(stub, async (instance, ctx) => {
      await instance.lifecycle.start();
      for (let i = 0; i < 500; i++) await instance.queue.push("step", { n: i });
      const cursor = ctx.storage.sql.exec(nextJobQuery("dokit_queue", "seq"));
      cursor.toArray();
      expect(cursor.rowsRead).toBeLessThanOrEqual(2);
      const plan = JSON.stringify(ctx.storage.sql.exec(`EXPLAIN QUERY PLAN ${nextJobQuery("dokit_queue", "seq")}`).toArray());
      expect(plan).toMatch(/USING (COVERING )?INDEX dokit_queue_next/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
      // A run reads the head ahead, a batch at a time, in the same index.
      const take = ctx.storage.sql.exec(dueJobsQuery("dokit_queue", "seq"));
      expect(take.toArray().map((row) => JSON.parse(row.payload as string).n)).toEqual(Array.from({ length: TAKE_BATCH }, (_, n) => n));
      expect(take.rowsRead).toBeLessThanOrEqual(TAKE_BATCH + 1);
      const takePlan = JSON.stringify(ctx.storage.sql.exec(`EXPLAIN QUERY PLAN ${dueJobsQuery("dokit_queue", "seq")}`).toArray());
      expect(takePlan).toMatch(/USING INDEX dokit_queue_next/);
      expect(takePlan).not.toMatch(/TEMP B-TREE/);
      await instance.queue.clear();
    });
  });
});

describe("at least once", () => {
  it("runs an item again when its instance died while it ran; the item behind it runs after", { timeout: 30_000 }, async () => {
    const name = fresh("crash");
    // A stub that saw its object reset stays broken: take a fresh one for each call.
    const stub = () => env.CRASHING.get(env.CRASHING.idFromName(name));
    await stub().pushAll();
    await vi.waitFor(async () => expect(await stub().runs()).toEqual([1, 2]), { timeout: 15_000, interval: 200 });
    expect(await stub().starts()).toBe(2);
  });
  it("gives up on an item that kills its instance on every run: after maxAttempts cut-short runs, onError with JOB_INTERRUPTED", { timeout: 30_000 }, async () => {
    const name = fresh("poison");
    const stub = () => env.CRASHING.get(env.CRASHING.idFromName(name));
    await stub().pushPoison();
    await vi.waitFor(async () => expect(await stub().runs()).toEqual([9]), { timeout: 20_000, interval: 250 });
    expect(await stub().starts()).toBe(3);
    expect(await stub().errors()).toEqual([{ code: "JOB_INTERRUPTED", message: 'dokit: Queue: job "poison" (always) was cut short 3 times' }]);
  });
});

describe("the one alarm", () => {
  it("keeps no item's time in the shared schedule; one an earlier version stored is dropped, and a fresh instance reads the table", async () => {
    const stub = work("unstored");
    await stub.pushSteps(1, 2);
    await runInDurableObject(stub, async (_instance, ctx) => {
      expect(await ctx.storage.get("__dokit_alarms")).toBeUndefined();
      // What an earlier version stored: a time far off for the queue's key.
      await ctx.storage.put("__dokit_alarms", { work: { queue: Date.now() + 3_600_000 } });
    });
    await evictDurableObject(stub);
    // The items are due now (in the table): the firing runs them, whatever the stored time said.
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect((await stub.runs()).map((r) => r.n)).toEqual([1, 2]));
    await runInDurableObject(stub, async (_instance, ctx) => {
      expect(await ctx.storage.get("__dokit_alarms")).toBeUndefined();
      expect(await ctx.storage.getAlarm()).toBeNull();
    });
  });
});

describe("with a Scheduler on the same object", () => {
  it("shares the one alarm: the queue's item runs now, the schedule stays armed", async () => {
    const stub = env.BOTH.get(env.BOTH.idFromName(fresh("both")));
    const alarm = await stub.both();
    expect(alarm).toBeLessThanOrEqual(Date.now());
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect(await stub.runs()).toEqual(["queue 1"]));
    const { alarm: next, schedule, queue, stored } = await stub.pendingAlarm();
    // Armed for the schedule's row; each job table holds its own time, none is stored besides (the host has no alarm of its own).
    expect(queue).toBeNull();
    expect(next).toBe(schedule);
    expect(next).toBeGreaterThan(Date.now() + 3_000_000);
    expect(stored).toBeUndefined();
  });
});

describe("adopting the reference's items", () => {
  it("moves registered rows of cf_agents_queues and cf_agents_jobs into the Queue in order; they run; the rest stay", async () => {
    const stub = work("adopt");
    await runInDurableObject(stub, async (instance, ctx) => {
      const sql = ctx.storage.sql;
      sql.exec(`CREATE TABLE cf_agents_queues (id TEXT PRIMARY KEY NOT NULL, payload TEXT, callback TEXT, created_at INTEGER DEFAULT (unixepoch()), retry_options TEXT)`);
      sql.exec("INSERT INTO cf_agents_queues (id, payload, callback, created_at) VALUES ('a', '{\"n\":1}', 'step', 1), ('b', '{\"n\":2}', 'step', 2), ('c', '{}', 'gone', 3)");
      sql.exec(`CREATE TABLE cf_agents_jobs (id TEXT PRIMARY KEY NOT NULL, capability TEXT NOT NULL, fn TEXT NOT NULL, time INTEGER NOT NULL,
        payload TEXT, retry_options TEXT, created_at INTEGER NOT NULL DEFAULT (unixepoch())) WITHOUT ROWID`);
      sql.exec("INSERT INTO cf_agents_jobs (id, capability, fn, time, payload) VALUES ('d', 'queue', 'step', 5, '{\"payload\":{\"n\":3}}')");
      const warn = console.warn;
      console.warn = () => {};
      try {
        await instance.lifecycle.start();
      } finally {
        console.warn = warn;
      }
      expect((await instance.queue.list()).map((i) => i.id)).toEqual(["a", "b", "d"]);
      expect(sql.exec("SELECT id FROM cf_agents_queues").toArray().map((r) => r.id)).toEqual(["c"]);
      expect(sql.exec("SELECT name FROM sqlite_master WHERE name = 'cf_agents_jobs'").toArray()).toEqual([]);
    });
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect((await stub.runs()).map((r) => r.n)).toEqual([1, 2, 3]));
  });
});
