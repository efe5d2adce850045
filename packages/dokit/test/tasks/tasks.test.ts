import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { subscribe, type TaskEvent } from "../../src/observability";
import { DuplicateTaskStepError, MissingTaskDefinitionError, TaskReplayDivergedError, Tasks, TaskSerializationError } from "../../src/tasks";
import { fresh, sleep } from "../helpers";
import type { RunView } from "./objects";

// biome-ignore lint/suspicious/noExplicitAny: journal entries are whatever the scenario wrote
const read = async (stub: { read(kind: string): Promise<string> }, kind: string): Promise<any[]> => JSON.parse(await stub.read(kind));
const flows = (label: string) => env.FLOWS.get(env.FLOWS.idFromName(fresh(label)));

describe("starting runs", () => {
  it("accepts a run, returns a receipt at once, and runs it on the alarm to completion", async () => {
    const stub = flows("steps");
    const receipt = await stub.start("steps", { tag: "t" });
    expect(receipt).toMatchObject({ definition: "steps", accepted: true, state: "pending" });
    expect(typeof receipt.runId).toBe("string");
    const run = await stub.settle(receipt.runId);
    expect(run).toMatchObject({ runId: receipt.runId, state: "completed", result: { a: 1, b: 2, c: 3, tag: "t", agentOk: true } });
    expect(run?.settledAt).toBeGreaterThanOrEqual(receipt.createdAt);
  });

  it("joins a run by idempotencyKey or runId (accepted: false), and creates one per new key", async () => {
    const stub = flows("join");
    const first = await stub.start("echo", { n: 1 }, { idempotencyKey: "k1", metadata: { by: "test" } });
    const again = await stub.start("echo", { n: 2 }, { idempotencyKey: "k1" });
    expect(again).toMatchObject({ runId: first.runId, accepted: false });
    const byId = await stub.start("echo", { n: 3 }, { runId: first.runId });
    expect(byId).toMatchObject({ runId: first.runId, accepted: false });
    const chosen = await stub.start("echo", { n: 4 }, { runId: "chosen" });
    expect(chosen).toMatchObject({ runId: "chosen", accepted: true });
    expect(await stub.settle(first.runId)).toMatchObject({ state: "completed", result: { n: 1 }, metadata: { by: "test" } });
    expect(await stub.settle("chosen")).toMatchObject({ state: "completed", result: { n: 4 } });
    await runInDurableObject(stub, async (instance) => {
      expect(await instance.tasks.getByIdempotencyKey("k1")).toMatchObject({ runId: first.runId });
      expect(await instance.tasks.getByIdempotencyKey("nope")).toBeNull();
    });
  });

  it("types run and handle against the definitions; a handle sees only its definition's runs", async () => {
    const stub = flows("handle");
    await runInDurableObject(stub, async (instance) => {
      await instance.lifecycle.start();
      const echo = instance.tasks.handle("flaky");
      const receipt = await echo.run({ failures: 0, limit: 1, delay: 1 });
      const other = await instance.tasks.run("nothing");
      expect(echo.name).toBe("flaky");
      expect(await echo.get(receipt.runId)).toMatchObject({ definition: "flaky" });
      expect(await echo.get(other.runId)).toBeNull();
      expect(await echo.cancel(other.runId)).toBe(false);
      expect(await echo.cancel(receipt.runId, "changed my mind")).toBe(true);
      expect(await echo.get(receipt.runId)).toMatchObject({ state: "cancelled", reason: "changed my mind" });
      // @ts-expect-error: the input is typed by the definition
      await echo.run({ failures: "no" }).catch(() => {});
      // @ts-expect-error: only declared names
      await instance.tasks.run("undeclared").catch(() => {});
    });
  });

  it("refuses bad input with the named error or a code, storing nothing", async () => {
    const stub = flows("bad");
    await runInDurableObject(stub, async (instance, ctx) => {
      await instance.lifecycle.start();
      const tasks = instance.tasks as unknown as Tasks;
      const refused = async (call: () => Promise<unknown>) => call().catch((error: unknown) => error);
      expect(await refused(() => tasks.run("missing"))).toBeInstanceOf(MissingTaskDefinitionError);
      expect(await refused(() => tasks.run("constructor"))).toBeInstanceOf(MissingTaskDefinitionError);
      expect(await refused(() => tasks.run("echo", { f: 1n }))).toBeInstanceOf(TaskSerializationError);
      expect(await refused(() => tasks.run("echo", "x".repeat(1_048_577)))).toBeInstanceOf(TaskSerializationError);
      expect(await refused(() => tasks.run("echo", 1, { runId: "" }))).toMatchObject({ code: "INVALID_ARGUMENT" });
      expect(await refused(() => tasks.run("echo", 1, { idempotencyKey: "k".repeat(257) }))).toMatchObject({ code: "INVALID_ARGUMENT" });
      expect(await refused(() => tasks.run("echo", 1, { metadata: [] as never }))).toMatchObject({ code: "INVALID_ARGUMENT" });
      const missing = (await refused(() => tasks.run("missing"))) as MissingTaskDefinitionError;
      expect(missing).toMatchObject({ name: "MissingTaskDefinitionError", code: "MISSING_DEFINITION", definition: "missing" });
      expect(missing.message).toMatch(/^dokit: Tasks: no definition named "missing"/);
      expect(await tasks.list()).toEqual([]);
      expect(await ctx.storage.getAlarm()).toBeNull();
    });
  });

  it("keeps nothing of a run started with retain: false once it settled", async () => {
    const stub = flows("retain");
    const receipt = await stub.start("echo", 7, { retain: false });
    expect(await stub.settle(receipt.runId)).toMatchObject({ state: "completed", result: 7 });
    expect(await stub.get(receipt.runId)).toBeNull();
  });

  it("registers a definition with register(); a name registered twice is refused", async () => {
    const tasks = new Tasks();
    tasks.register("extra", async () => 1);
    expect(() => tasks.register("extra", async () => 1)).toThrow(/already registered/);
  });
});

describe("replay", () => {
  it("runs each step's callback once per successful completion; code between steps runs again on every attempt", async () => {
    const stub = flows("replay");
    const { runId } = await stub.start("steps", { tag: "r" });
    expect(await stub.settle(runId)).toMatchObject({ state: "completed" });
    expect(await read(stub, "cb")).toEqual(["a", "b", "c"]);
    // Two attempts: the first parks at the sleep, the second replays a and b from the journal.
    expect(await read(stub, "between")).toEqual(["start", "after a", "start", "after a", "after nap"]);
  });

  it("fails the run with DuplicateTaskStepError before running a step name's second callback", async () => {
    const stub = flows("duplicate");
    const { runId } = await stub.start("duplicate", null);
    expect(await stub.settle(runId)).toMatchObject({ state: "failed", error: { name: "DuplicateTaskStepError" } });
    expect(await read(stub, "cb")).toEqual(["same 1"]);
    expect(new DuplicateTaskStepError("x")).toMatchObject({ code: "DUPLICATE_STEP", stepName: "x" });
  });

  it("fails the run with TaskReplayDivergedError when a replay finds a step name under another kind", async () => {
    const stub = flows("diverge");
    const { runId } = await stub.start("diverge", null);
    await vi.waitFor(async () => expect(await stub.get(runId)).toMatchObject({ state: "waiting", reason: "sleep" }));
    await stub.flag("flip"); // the code changes under the run in flight
    const run = await stub.settle(runId);
    expect(run).toMatchObject({ state: "failed", error: { name: "TaskReplayDivergedError" } });
    expect(run?.error?.message).toMatch(/step "first"/);
    expect(new TaskReplayDivergedError("s", "d")).toMatchObject({ code: "REPLAY_DIVERGED", stepName: "s" });
  });

  it("gives every step a key identical across attempts and replays: step.idempotencyKey(name) is the same", async () => {
    const stub = flows("keyed");
    const { runId } = await stub.start("keyed", null);
    const run = await stub.settle(runId);
    expect(run).toMatchObject({ state: "completed", result: { key: `${runId}:k`, asked: `${runId}:k` } });
  });

  it("keeps status messages and stays silent over old ground", async () => {
    const stub = flows("status");
    const runId = "status-run";
    await stub.start("status", { runId }, { runId });
    await vi.waitFor(async () => expect(await stub.get(runId)).toMatchObject({ state: "waiting", statusMessage: "two" }), { timeout: 5000 });
    expect(await stub.settle(runId)).toMatchObject({ state: "completed", result: "done" });
    // What the run showed right after status("one"), on each of its three attempts: new ground on the
    // first; on the third, a replay over old ground, it left the later "two" in place.
    expect(await read(stub, "status")).toEqual(["one", "one", "two"]);
  });
});

describe("rows written", () => {
  it("writes a trivial run's rows and nothing to the shared alarm's schedule (its wake's time is read from its job row)", async () => {
    const { rows, keys } = await flows("rows").countRun("one");
    // Not when accepted, started or settled, nor for the job runner's deadman while it runs: the host has no alarm of its own to keep apart.
    expect(keys).toEqual([]);
    // The run (2: its row and id index), its wake (3, then 1 to delete it), its claim, its step (running, done), its settlement.
    expect(rows).toBe(10);
  });

  it("runs a run accepted the moment the one before settled, while that one's job is still being finished", async () => {
    // The settled run's job is deleted before the drain finishes it; the new run's job may take the same seq.
    expect(await flows("back-to-back").backToBack(3)).toEqual(["completed", "completed", "completed"]);
  });
});

describe("retries and timeouts", () => {
  it("retries a throwing step on a durable delay with exponential backoff, the same idempotency key each time", async () => {
    const stub = flows("retry");
    const { runId } = await stub.start("flaky", { failures: 3, limit: 5, delay: 40 });
    expect(await stub.settle(runId)).toMatchObject({ state: "completed", result: 4 });
    const attempts = (await read(stub, "attempt")) as { attempt: number; key: string; at: number }[];
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4]);
    expect(new Set(attempts.map((a) => a.key))).toEqual(new Set([`${runId}:flaky`]));
    const gaps = attempts.slice(1).map((a, i) => a.at - (attempts[i] as { at: number }).at);
    // 40, 80, 160 ms at least (the alarm may fire later, never earlier).
    expect(gaps[0]).toBeGreaterThanOrEqual(40);
    expect(gaps[1]).toBeGreaterThanOrEqual(80);
    expect(gaps[2]).toBeGreaterThanOrEqual(160);
  });

  it("parks the run waiting (reason retry) between attempts", async () => {
    const stub = flows("retry-wait");
    const { runId } = await stub.start("flaky", { failures: 1, limit: 2, delay: 400, backoff: "constant" });
    await vi.waitFor(async () => expect(await stub.get(runId)).toMatchObject({ state: "waiting", reason: "retry" }));
    expect(await stub.settle(runId)).toMatchObject({ state: "completed", result: 2 });
  });

  it("fails the run after the last attempt with the step's error", async () => {
    const stub = flows("exhaust");
    const { runId } = await stub.start("flaky", { failures: 10, limit: 3, delay: 1, backoff: "linear" });
    expect(await stub.settle(runId)).toMatchObject({ state: "failed", error: { name: "Error", message: "fail 3" } });
    expect(await read(stub, "attempt")).toHaveLength(3);
  });

  it("fails at once on NonRetryableError; a handler that catches it goes on, and replays throw it the same", async () => {
    const stub = flows("fatal");
    const { runId } = await stub.start("fatal", null);
    expect(await stub.settle(runId)).toMatchObject({ state: "failed", error: { name: "NonRetryableError", message: "no way" } });
    expect(await read(stub, "attempt")).toEqual(["fatal"]);
    const caught = await stub.start("caught", null);
    expect(await stub.settle(caught.runId)).toMatchObject({ state: "completed", result: "NonRetryableError: refused" });
    expect(await read(stub, "outcome")).toEqual(["NonRetryableError: refused", "NonRetryableError: refused"]);
  });

  it("times an attempt out (its signal aborts with STEP_TIMEOUT), retries it, and never journals the late result", async () => {
    const stub = flows("timeout");
    const { runId } = await stub.start("slow", { timeout: 50 });
    expect(await stub.settle(runId)).toMatchObject({ state: "completed", result: "fast" });
    await vi.waitFor(async () => expect(await read(stub, "late")).toEqual([{ attempt: 1, aborted: true, code: "STEP_TIMEOUT" }]));
    expect(await read(stub, "slow")).toEqual([{ attempt: 1 }, { attempt: 2 }]);
    expect(await stub.get(runId)).toMatchObject({ result: "fast" });
  });

  it("fails a step whose result is over 1 MiB with TaskSerializationError, without retrying", async () => {
    const stub = flows("big");
    const { runId } = await stub.start("big", { size: 1_048_577 });
    expect(await stub.settle(runId)).toMatchObject({ state: "failed", error: { name: "TaskSerializationError" } });
  });
});

describe("sleeps", () => {
  it("sleeps across an eviction: no instance in between, the alarm wakes a fresh one that finishes the run", async () => {
    const name = fresh("evicted");
    const stub = () => env.FLOWS.get(env.FLOWS.idFromName(name));
    const { runId } = await stub().start("sleeper", { ms: 400 });
    await vi.waitFor(async () => expect(await stub().get(runId)).toMatchObject({ state: "waiting", reason: "sleep" }));
    await evictDurableObject(stub());
    await sleep(1200);
    const looked = Date.now();
    const run: RunView | null = await stub().get(runId);
    expect(run).toMatchObject({ state: "completed" });
    const { before, after }: { before: number; after: number } = run?.result;
    expect(after - before).toBeGreaterThanOrEqual(400);
    expect(after).toBeLessThan(looked); // finished by the alarm, before anyone asked
  });

  it("sleeps until a wall-clock time", async () => {
    const stub = flows("until");
    const at = Date.now() + 300;
    const { runId } = await stub.start("until", { at });
    const run: RunView | null = await stub.settle(runId);
    expect(run).toMatchObject({ state: "completed" });
    const woke: number = run?.result;
    expect(woke).toBeGreaterThanOrEqual(at);
  });
});

describe("events", () => {
  it("parks a run on waitForEvent until sendEvent delivers the payload", async () => {
    const stub = flows("event-after");
    const { runId } = await stub.start("approval", {});
    await vi.waitFor(async () => expect(await stub.get(runId)).toMatchObject({ state: "waiting", reason: "event" }));
    expect(await stub.send(runId, "other", 1)).toBe(true); // not the awaited type: still waiting
    await sleep(100);
    expect(await stub.get(runId)).toMatchObject({ state: "waiting" });
    expect(await stub.send(runId, "approve", { ok: true })).toBe(true);
    expect(await stub.settle(runId)).toMatchObject({ state: "completed", result: { ok: true } });
    expect(await read(stub, "cb")).toEqual(["ask", "record"]);
  });

  it("keeps an event sent before the run reaches its step", async () => {
    const stub = flows("event-before");
    const { runId } = await stub.start("approval", {});
    expect(await stub.send(runId, "approve", { ok: false })).toBe(true);
    expect(await stub.settle(runId)).toMatchObject({ state: "completed", result: { ok: false } });
  });

  it("fails the wait with EVENT_TIMEOUT after its timeout (a handler may catch it); refuses events to settled or unknown runs", async () => {
    const stub = flows("event-timeout");
    const { runId } = await stub.start("patient", null);
    expect(await stub.settle(runId)).toMatchObject({ state: "completed", result: "gave up: EVENT_TIMEOUT" });
    expect(await stub.send(runId, "approve", 1)).toBe(false);
    expect(await stub.send("no-such-run", "approve", 1)).toBe(false);
  });

  it("bounds undelivered events per run and their size", async () => {
    const stub = flows("event-bounds");
    await runInDurableObject(stub, async (instance) => {
      await instance.lifecycle.start();
      const { runId } = await instance.tasks.run("approval", {});
      await instance.tasks.cancel(runId); // settled runs take no events: use a fresh waiting one
      const live = await instance.tasks.run("approval", {}, { runId: "live" });
      const payloadError = await instance.tasks.sendEvent(live.runId, "x", "y".repeat(1_048_577)).catch((e: unknown) => e);
      expect(payloadError).toBeInstanceOf(TaskSerializationError);
      for (let i = 0; i < 100; i++) await instance.tasks.sendEvent(live.runId, "x", i);
      expect(await instance.tasks.sendEvent(live.runId, "x", 101).catch((e: unknown) => e)).toMatchObject({ code: "TOO_MANY_EVENTS" });
      await instance.tasks.cancel(live.runId);
    });
  });
});

describe("cancellation", () => {
  it("cancels a pending run at once", async () => {
    const stub = flows("cancel-pending");
    await runInDurableObject(stub, async (instance) => {
      await instance.lifecycle.start();
      const { runId } = await instance.tasks.run("steps", { tag: "x" });
      expect(await instance.tasks.cancel(runId, "not needed")).toBe(true);
      expect(await instance.tasks.get(runId)).toMatchObject({ state: "cancelled", reason: "not needed" });
      expect(await instance.tasks.cancel(runId)).toBe(false);
    });
    await sleep(200);
    expect(await read(stub, "cb")).toEqual([]);
  });

  it("cancels a waiting run at once", async () => {
    const stub = flows("cancel-waiting");
    const { runId } = await stub.start("approval", {});
    await vi.waitFor(async () => expect(await stub.get(runId)).toMatchObject({ state: "waiting" }));
    expect(await stub.cancel(runId)).toBe(true);
    expect(await stub.get(runId)).toMatchObject({ state: "cancelled" });
    expect(await stub.send(runId, "approve", 1)).toBe(false);
    expect(await read(stub, "cb")).toEqual(["ask"]);
  });

  it("aborts a live attempt through its signal (CANCELLED) and settles the run cancelled", async () => {
    const stub = flows("cancel-running");
    const { runId } = await stub.start("hold", null);
    await vi.waitFor(async () => expect(await read(stub, "hold")).toEqual(["started"]));
    expect(await stub.get(runId)).toMatchObject({ state: "running", attempt: 1 });
    expect(await stub.cancel(runId, "stop")).toBe(true);
    expect(await stub.get(runId)).toMatchObject({ state: "cancelled", reason: "stop" });
    await vi.waitFor(async () => expect(await read(stub, "hold")).toEqual(["started", "CANCELLED"]));
  });

  it("rejects the writes of an attempt that ignores the signal: its result and later steps are never journaled", async () => {
    const stub = flows("cancel-stubborn");
    const { runId } = await stub.start("stubborn", null);
    await vi.waitFor(async () => expect(await read(stub, "stubborn")).toEqual(["started"]));
    expect(await stub.cancel(runId)).toBe(true);
    await vi.waitFor(async () => expect(await read(stub, "stubborn")).toEqual(["started", "finished"]));
    await sleep(100);
    expect(await read(stub, "stubborn")).toEqual(["started", "finished"]);
    expect(await stub.get(runId)).toMatchObject({ state: "cancelled" });
    const [run] = await stub.inspect();
    expect(run?.steps).toEqual([{ name: "stubborn", kind: "do", state: "running", attempts: 1 }]);
  });

  it("refuses to cancel a settled run", async () => {
    const stub = flows("cancel-settled");
    const { runId } = await stub.start("nothing");
    expect(await stub.settle(runId)).toMatchObject({ state: "completed" });
    expect(await stub.cancel(runId)).toBe(false);
    expect(await stub.get(runId)).toMatchObject({ state: "completed" });
  });
});

describe("reading, waiting, deleting", () => {
  it("lists runs newest first, by definition and state; deletes settled runs before a time", async () => {
    const stub = flows("list");
    await runInDurableObject(stub, async (instance) => {
      await instance.lifecycle.start();
      const tasks = instance.tasks;
      const a = await tasks.run("approval", {});
      const b = await tasks.run("echo", 1);
      const c = await tasks.run("echo", 2);
      expect((await tasks.list()).map((r) => r.runId)).toEqual([c.runId, b.runId, a.runId]);
      expect((await tasks.list({ definition: "echo" })).map((r) => r.runId)).toEqual([c.runId, b.runId]);
      expect((await tasks.list({ limit: 1 })).map((r) => r.runId)).toEqual([c.runId]);
      await tasks.wait(c.runId);
      await tasks.wait(b.runId);
      expect((await tasks.list({ status: "completed" })).map((r) => r.runId)).toEqual([c.runId, b.runId]);
      expect((await tasks.list({ state: ["pending", "running", "waiting"] })).map((r) => r.runId)).toEqual([a.runId]);
      expect(await tasks.delete({ settledBefore: new Date(0) })).toBe(0);
      expect(await tasks.delete({ settledBefore: new Date(Date.now() + 1) })).toBe(2);
      expect((await tasks.list()).map((r) => r.runId)).toEqual([a.runId]);
      await expect(tasks.delete({ status: ["waiting" as "failed"] })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await tasks.cancel(a.runId);
    });
  });

  it("wait() resolves when the run settles, and gives up after its timeout or on its signal", async () => {
    const stub = flows("wait");
    await runInDurableObject(stub, async (instance) => {
      await instance.lifecycle.start();
      const tasks = instance.tasks;
      const { runId } = await tasks.run("approval", {});
      await expect(tasks.wait(runId, { timeout: 50 })).rejects.toMatchObject({ code: "WAIT_TIMEOUT" });
      const controller = new AbortController();
      const aborted = tasks.wait(runId, { signal: controller.signal });
      controller.abort(new Error("caller left"));
      await expect(aborted).rejects.toThrow("caller left");
      const settled = tasks.wait(runId);
      await tasks.sendEvent(runId, "approve", { ok: true });
      expect(await settled).toMatchObject({ state: "completed", result: { ok: true } });
      expect(await tasks.wait("unknown")).toBeNull();
      expect(await tasks.wait(runId)).toMatchObject({ state: "completed" });
    });
  });

  it("shows runs with their steps, attempts and states (what the inspector lists)", async () => {
    const stub = flows("inspect");
    const { runId } = await stub.start("flaky", { failures: 1, limit: 3, delay: 1 });
    await stub.settle(runId);
    expect(await stub.inspect()).toEqual([
      expect.objectContaining({ runId, state: "completed", attempt: 2, steps: [{ name: "flaky", kind: "do", state: "done", attempts: 2 }] }),
    ]);
  });

  it("publishes task:* events on agents:task", async () => {
    const name = fresh("events");
    const events: TaskEvent[] = [];
    onTestFinished(subscribe("task", (event) => event.name === name && events.push(event)));
    const stub = env.FLOWS.get(env.FLOWS.idFromName(name));
    const { runId } = await stub.start("flaky", { failures: 1, limit: 3, delay: 1 });
    await stub.settle(runId);
    expect(events.map((e) => e.type)).toEqual([
      "task:accepted",
      "task:attempt:started",
      "task:step:started",
      "task:step:retry",
      "task:waiting",
      "task:attempt:started",
      "task:step:started",
      "task:step:completed",
      "task:completed",
    ]);
    expect(events.every((e) => e.payload.runId === runId && e.agent === "Flows")).toBe(true);
    expect(events[3]?.payload).toMatchObject({ step: "flaky", attempt: 1, maxAttempts: 3, error: "fail 1", definition: "flaky" });
  });
});

describe("deployments", () => {
  it("fails a run whose definition a deployment removed with MissingTaskDefinitionError; the other runs go on", async () => {
    const name = fresh("deploy");
    const stub = () => env.DEPLOYS.get(env.DEPLOYS.idFromName(name));
    const gone = await stub().start("nap@v1");
    const kept = await stub().start("kept@v1");
    await vi.waitFor(async () => expect(await stub().get(gone.runId)).toMatchObject({ state: "waiting" }));
    await stub().deploy(2);
    onTestFinished(() => stub().deploy(1));
    await evictDurableObject(stub());
    expect(await stub().settle(gone.runId)).toMatchObject({ state: "failed", error: { name: "MissingTaskDefinitionError" } });
    expect(await stub().settle(kept.runId)).toMatchObject({ state: "completed", result: "kept" });
  });
});

describe("side by side", () => {
  it("runs other runs to completion while one run's step hangs", async () => {
    const stub = flows("hang");
    const hanging = await stub.start("hold", null);
    await vi.waitFor(async () => expect(await read(stub, "hold")).toEqual(["started"]));
    const others = [await stub.start("echo", 1), await stub.start("steps", { tag: "beside" })];
    for (const { runId } of others) expect(await stub.settle(runId)).toMatchObject({ state: "completed" });
    expect(await stub.get(hanging.runId)).toMatchObject({ state: "running" });
    expect(await stub.cancel(hanging.runId)).toBe(true);
  });
});

describe("with a Scheduler and a Queue on the same object", () => {
  it("shares the one alarm: every run, schedule and item completes; a failing definition blocks nothing", async () => {
    const stub = env.MIXED.get(env.MIXED.idFromName(fresh("mixed")));
    const { broken, runs } = await stub.everything();
    for (const runId of runs) expect(await stub.settle(runId)).toMatchObject({ state: "completed" });
    const results: unknown[] = [];
    for (const runId of runs) {
      const run: RunView | null = await stub.get(runId);
      results.push(run?.result);
    }
    expect(results).toEqual([10, 20, 30, 40, 50]);
    expect(await stub.settle(broken)).toMatchObject({ state: "failed", error: { message: "always" } });
    expect(await read(stub, "broken")).toHaveLength(3);
    await vi.waitFor(async () => expect(await read(stub, "tick")).toEqual([1, 2, 3]));
    await vi.waitFor(async () => expect(await read(stub, "item")).toEqual([1, 2, 3]));
    await vi.waitFor(async () => expect(await stub.alarmState()).toEqual({ alarm: null, work: {} }));
  });

  it("fires the Scheduler's callbacks while a task's step hangs", async () => {
    const stub = env.MIXED.get(env.MIXED.idFromName(fresh("mixed-hang")));
    const hanging = await stub.start("hang", null);
    await vi.waitFor(async () => expect(await stub.get(hanging.runId)).toMatchObject({ state: "running" }));
    await stub.tickIn(0.2, 7);
    await vi.waitFor(async () => expect(await read(stub, "tick")).toEqual([7]), { timeout: 4000 });
    expect(await stub.get(hanging.runId)).toMatchObject({ state: "running" });
    expect(await stub.cancel(hanging.runId)).toBe(true);
  });
});

describe("the reference's docs example", () => {
  it("compiles and runs with only its import paths changed", async () => {
    const stub = env.REPORTS.get(env.REPORTS.idFromName(fresh("report")));
    const { receipt, run } = await stub.startReport({ reportId: "42", topic: "tides" });
    expect(receipt).toMatchObject({ definition: "build-report@v1", accepted: true });
    expect(run).toMatchObject({ runId: receipt.runId, definition: "build-report@v1" });
    expect((await stub.startReport({ reportId: "42", topic: "tides" })).receipt).toMatchObject({ runId: receipt.runId, accepted: false });
    await vi.waitFor(async () => expect(await stub.report(receipt.runId)).toMatchObject({ state: "waiting", reason: "sleep", statusMessage: "Researching" }));
    await stub.skipSleep(receipt.runId); // the editorial delay is 30 seconds
    await vi.waitFor(async () => expect(await stub.report(receipt.runId)).toMatchObject({ state: "completed", result: { reportId: "42", objectKey: "reports/42.json" } }));
    expect(await stub.calls()).toEqual(["research", `publish reports/42.json 1 ${receipt.runId}:publish`]);
  });
});

describe("interruption", () => {
  it("completes a run whose instance is aborted before every step and in the middle of every step", { timeout: 60_000 }, async () => {
    const name = fresh("interrupts");
    // A stub that saw its object reset stays broken: take a fresh one for each call.
    const stub = () => env.CRASHES.get(env.CRASHES.idFromName(name));
    const steps = 4;
    const points = Array.from({ length: steps }, (_, i) => [`before s${i + 1}`, `mid s${i + 1}`]).flat();
    await stub().plan([...points, "end"]);
    const { runId } = await stub().start("interrupts", { steps });
    await vi.waitFor(
      async () => {
        let state: string | undefined;
        try {
          state = await stub().pokeState();
        } catch {
          state = "reset"; // the call met the abort
        }
        expect(state).toBe("completed");
      },
      { timeout: 50_000, interval: 250 },
    );
    const run: RunView | null = await stub().get(runId);
    expect(run?.result).toEqual([1, 2, 3, 4]);
    expect(await read(stub(), "done")).toEqual([...points, "end"]); // every planned abort happened
    // Each step's callback: cut short once, then run again with the same key, seeing the interruption; never a third time.
    const expected = Array.from({ length: steps }, (_, i) => [
      { step: i + 1, attempt: 1, key: `${runId}:s${i + 1}`, interrupted: null },
      { step: i + 1, attempt: 2, key: `${runId}:s${i + 1}`, interrupted: { name: `s${i + 1}`, attempt: 1 } },
    ]).flat();
    expect(await read(stub(), "cb")).toEqual(expected);
  });
});
