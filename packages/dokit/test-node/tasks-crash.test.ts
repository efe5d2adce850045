// A Tasks run survives its workerd process being killed: the process is SIGKILLed while a step's
// callback runs, a new one starts on the same persisted storage, and the run completes, the
// interrupted step running again with the same idempotency key and seeing step.interrupted.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { eventually, fresh } from "./helpers";
import { startLoopbackWorker } from "./loopback-worker";

const config = new URL("./tasks/wrangler.jsonc", import.meta.url);
const persist = mkdtempSync(join(tmpdir(), "dokit-tasks-"));
let stops: Array<() => Promise<void>> = [];

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop().catch(() => {})));
  rmSync(persist, { recursive: true, force: true });
});

/** @returns the pids of this process's descendants whose command is workerd */
function workerdPids(): number[] {
  const table = execFileSync("ps", ["-eo", "pid=,ppid=,comm="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .map(([pid, ppid, comm]) => ({ pid: Number(pid), ppid: Number(ppid), comm: comm ?? "" }));
  const mine = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of table) if (mine.has(row.ppid) && !mine.has(row.pid)) (mine.add(row.pid), (grew = true));
  }
  return table.filter((row) => mine.has(row.pid) && row.comm.includes("workerd")).map((row) => row.pid);
}

type Look = { run: { state: string; result?: unknown } | null; journal: Array<Record<string, unknown>> };
const look = async (base: string, name: string): Promise<Look> => (await fetch(new URL(`/run/${name}`, base))).json() as Promise<Look>;

describe("Tasks over a killed process", () => {
  it("completes a run after its workerd process is SIGKILLed mid-step and restarted on the same storage", { timeout: 120_000 }, async () => {
    const name = fresh("killed");
    const first = await startLoopbackWorker(config, persist);
    stops.push(first.stop);
    const before = new Set(workerdPids());
    expect(before.size).toBeGreaterThan(0);
    expect(await (await fetch(new URL(`/start/${name}`, first.url), { method: "POST" })).text()).toBe("the-run");
    await eventually(async () => expect((await look(first.url, name)).journal).toContainEqual(expect.objectContaining({ step: "two", attempt: 1 })), {
      timeout: 20_000,
      interval: 100,
    });
    expect((await look(first.url, name)).run?.state).toBe("running");
    for (const pid of before) process.kill(pid, "SIGKILL");
    // The process is gone: nothing answers on its port any more.
    await eventually(async () => expect(await fetch(new URL(`/run/${name}`, first.url)).then(() => "answered", () => "refused")).toBe("refused"), { timeout: 10_000, interval: 100 });
    await first.stop().catch(() => {});
    stops = [];

    const second = await startLoopbackWorker(config, persist);
    stops.push(second.stop);
    await eventually(async () => expect((await look(second.url, name)).run?.state).toBe("completed"), { timeout: 60_000, interval: 250 });
    const { run, journal } = await look(second.url, name);
    expect(run?.result).toEqual([1, 2, 4]);
    expect(journal).toEqual([
      { step: "one" },
      { step: "two", attempt: 1, idempotencyKey: "the-run:two", interrupted: null },
      { step: "two", attempt: 2, idempotencyKey: "the-run:two", interrupted: { name: "two", attempt: 1 } },
      { step: "three" },
    ]);
  });
});
