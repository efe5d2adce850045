// Jobs bench: dokit's Scheduler against a raw object whose alarm() loops over
// its own SQL table (bench/worker-jobs/worker.ts), interleaved round by round.
//   firing: n jobs due now, drained by one alarm run; time per job, dokit / raw (target ≤ 1.15×).
//     The time is the drain call's, less an empty call's to the same object right after
//     (the round trip through the dev server is about 3 ms, a third of the drain's time).
//   scheduling: 10 000 jobs set one by one; time, and rows in storage
// `node bench/jobs.ts [--quick]` alone, or `jobsBench()` from bench/run.ts.
import { fromPairs, type RunResult } from "./lib/results.ts";
import { figureText, runStandalone, type SideBySide, withWorker } from "./lib/standalone.ts";
import { middle as median } from "./lib/stats.ts";

const KILO = 1000;

/** One measure, for both implementations (`ratio`: dokit over raw). */
export interface JobsFigure extends SideBySide {
  raw: number;
  dokit: number;
}

/** @returns the jobs measure's result (lib/results.ts): raw, dokit and dokit over raw */
export function jobsRun(figures: readonly JobsFigure[]): Omit<RunResult, "command" | "quick"> {
  return { measure: "jobs", title: "Jobs", columns: ["raw", "dokit", "dokit/raw"], figures: fromPairs(figures, ["raw", "dokit"], ["raw", "dokit"]) };
}

/**
 * Starts the jobs worker, measures, stops it.
 * @returns the figures and a printable table
 */
export async function jobsBench(options: { quick?: boolean } = {}): Promise<{ figures: JobsFigure[]; text: string }> {
  const rounds = options.quick ? 3 : 10;
  const firing = 1_000;
  const scheduling = options.quick ? 2_000 : 10_000;
  return withWorker(new URL("./worker-jobs/wrangler.jsonc", import.meta.url), async ({ call }) => {
    const run = `${Date.now().toString(36)}`;
    const fire = { raw: [] as number[], dokit: [] as number[] };
    // Warm-up round (not recorded), then interleaved rounds; the order alternates.
    for (let round = -1; round < rounds; round++) {
      const order = round % 2 ? (["raw", "dokit"] as const) : (["dokit", "raw"] as const);
      for (const impl of order) {
        const name = `fire-${run}-${round}`;
        await call(`/${impl}/${name}/schedule?n=${firing}&due=-60000`);
        let t = performance.now();
        const done = await call(`/${impl}/${name}/drain`);
        const ms = performance.now() - t;
        if (done !== firing) throw new Error(`${impl} ran ${done} of ${firing} jobs`);
        t = performance.now();
        await call(`/${impl}/${name}/ping`);
        const trip = performance.now() - t;
        if (round >= 0) fire[impl].push(((ms - trip) * KILO) / firing);
      }
    }
    const schedule = { raw: [] as number[], dokit: [] as number[] };
    const rows = { raw: 0, dokit: 0 };
    for (let round = 0; round < (options.quick ? 1 : 3); round++) {
      for (const impl of ["raw", "dokit"] as const) {
        const name = `schedule-${run}-${round}`;
        const t = performance.now();
        await call(`/${impl}/${name}/schedule?n=${scheduling}&due=3600000`);
        schedule[impl].push(performance.now() - t);
        rows[impl] = (await call<number | null>(`/${impl}/${name}/rows`)) ?? 0;
      }
    }
    const figure = (measure: string, unit: string, raw: number, dokit: number, target?: number): JobsFigure => ({
      measure,
      unit,
      raw,
      dokit,
      ratio: dokit / raw,
      ...(target !== undefined ? { target } : {}),
    });
    const figures = [
      figure(`fire ${firing} due jobs, per job (median of ${rounds})`, "µs", median(fire.raw), median(fire.dokit), 1.15),
      figure(`schedule ${scheduling} jobs, total`, "ms", median(schedule.raw), median(schedule.dokit)),
      figure(`rows stored for ${scheduling} jobs`, "rows", rows.raw, rows.dokit),
    ];
    return { figures, text: figureText(figures, [["raw", "raw"], ["dokit", "dokit"]]) };
  });
}

await runStandalone(import.meta.url, {
  script: "bench/jobs.ts",
  heading: "Jobs (one object each; lower is better; ratio is dokit over raw)",
  bench: jobsBench,
  result: (figures) => jobsRun(figures),
});
