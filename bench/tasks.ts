// Tasks bench: dokit/tasks beside the reference's agents/tasks 0.32.0 in the same workerd
// (bench/worker-tasks/), interleaved round by round. Every figure is timed inside the object
// (Date.now() in workerd advances at I/O; both sides are timed the same way).
//   100 steps: one run of 100 trivial steps, from run() until the object saw it completed; rows
//     written per step (SQL rows and storage keys) and alarm invocations
//   1,000 runs: 1,000 one-step runs started in one request, until all completed; alarm invocations
//   recovery: a run's first step aborts its instance mid-callback; from the next request's arrival
//     until the step's callback runs again
// `node bench/tasks.ts [--quick] [--rows-only]` alone, or `tasksBench()` from bench/run.ts; either writes
// the result file bench/results/tasks.json (lib/results.ts; a --quick run bench/results/quick/tasks.json).
//   --rows-only: the result file keeps only the rows-written figures (exact counts, so valid from a loaded machine).
import type { RunResult } from "./lib/results.ts";
import { figureText, refRun, runStandalone, type VersusRef, withWorker } from "./lib/standalone.ts";
import { middle as median } from "./lib/stats.ts";

/** One measure, for both implementations. */
export type TasksFigure = VersusRef;

/** @returns the tasks measure's result (lib/results.ts): dokit, the reference and dokit over it; `rowsOnly` keeps the row counts */
export function tasksRun(figures: readonly TasksFigure[], rowsOnly = false): Omit<RunResult, "command" | "quick"> {
  return refRun("tasks", "Tasks", figures, rowsOnly);
}

/**
 * Starts the tasks worker, measures, stops it.
 * @returns the figures and a printable table
 */
export async function tasksBench(options: { quick?: boolean } = {}): Promise<{ figures: TasksFigure[]; text: string }> {
  const rounds = options.quick ? 3 : 9;
  const manyRounds = options.quick ? 1 : 3;
  return withWorker(new URL("./worker-tasks/wrangler.jsonc", import.meta.url), async ({ base, call }) => {
    const run = Date.now().toString(36);
    const impls = ["ref", "dokit"] as const;
    const steps = { ref: [] as number[], dokit: [] as number[] };
    const rows = { ref: [] as number[], dokit: [] as number[] };
    const stepWakes = { ref: [] as number[], dokit: [] as number[] };
    for (let round = -1; round < rounds; round++) {
      for (const impl of round % 2 ? impls : [...impls].reverse()) {
        const r = await call<{ ms: number; rows: number; wakes: number }>(`/${impl}/steps-${run}-${round}/steps?n=100`);
        if (round < 0) continue;
        steps[impl].push(r.ms);
        rows[impl].push(r.rows / 100);
        stepWakes[impl].push(r.wakes);
      }
    }
    const many = { ref: [] as number[], dokit: [] as number[] };
    const manyWakes = { ref: [] as number[], dokit: [] as number[] };
    for (let round = 0; round < manyRounds; round++) {
      for (const impl of round % 2 ? impls : [...impls].reverse()) {
        const r = await call<{ ms: number; wakes: number }>(`/${impl}/many-${run}-${round}/many?n=1000`);
        many[impl].push(r.ms);
        manyWakes[impl].push(r.wakes);
      }
    }
    const recovery = { ref: [] as number[], dokit: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      for (const impl of round % 2 ? impls : [...impls].reverse()) {
        const name = `crash-${run}-${round}`;
        await fetch(new URL(`/${impl}/${name}/crash`, base)).catch(() => undefined); // the instance aborts mid-step
        const r = await call<{ ms: number | null }>(`/${impl}/${name}/recovered?t=${Date.now()}`);
        if (r.ms !== null) recovery[impl].push(r.ms);
      }
    }
    const figure = (measure: string, unit: string, values: { ref: number[]; dokit: number[] }, target?: number): TasksFigure => {
      const ref = median(values.ref);
      const dokit = median(values.dokit);
      return { measure, unit, ref, dokit, ratio: dokit / ref, ...(target !== undefined ? { target } : {}) };
    };
    const figures = [
      figure(`a run of 100 trivial steps, wall (median of ${rounds})`, "ms", steps, 1),
      figure("a run of 100 trivial steps, rows written per step", "rows", rows, 1),
      figure("a run of 100 trivial steps, alarm invocations", "wakes", stepWakes),
      figure(`1,000 one-step runs started at once, until all completed (median of ${manyRounds})`, "ms", many),
      figure("1,000 one-step runs, alarm invocations", "wakes", manyWakes),
      figure(`recovery: wake after an abort → the step runs again (median of ${rounds})`, "ms", recovery),
    ];
    return { figures, text: figureText(figures, [["ref", "ref"], ["dokit", "dokit"]]) };
  });
}

await runStandalone(import.meta.url, {
  script: "bench/tasks.ts",
  heading: "Tasks (one object each; lower is better; ratio is dokit over agents/tasks 0.32.0)",
  bench: tasksBench,
  result: tasksRun,
});
