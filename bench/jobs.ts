// Jobs bench: dokit's Scheduler against a raw object whose alarm() loops over
// its own SQL table (bench/worker-jobs/worker.ts), interleaved round by round.
//   firing: n jobs due now, drained by one alarm run; time per job, dokit / raw (target ≤ 1.15×).
//     The time is the drain call's, less an empty call's to the same object right after
//     (the round trip through the dev server is about 3 ms, a third of the drain's time).
//   scheduling: 10 000 jobs set one by one; time, and rows in storage
// `node bench/jobs.ts [--quick]` alone, or `jobsBench()` from bench/run.ts.
import { commandLine, fromPairs, recordRun } from "./lib/results.ts";


const KILO = 1000;

/** One measure, for both implementations. */
export interface JobsFigure {
  measure: string;
  unit: string;
  raw: number;
  dokit: number;
  /** dokit over raw. */
  ratio: number;
  target?: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Starts the jobs worker, measures, stops it.
 * @returns the figures and a printable table
 */
export async function jobsBench(options: { quick?: boolean } = {}): Promise<{ figures: JobsFigure[]; text: string }> {
  const rounds = options.quick ? 3 : 10;
  const firing = 1_000;
  const scheduling = options.quick ? 2_000 : 10_000;
  const { unstable_startWorker } = await import("wrangler");
  const worker = await unstable_startWorker({
    config: new URL("./worker-jobs/wrangler.jsonc", import.meta.url).pathname,
    dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, persist: false, watch: false },
  });
  try {
    const base = await worker.url;
    const call = async (path: string) => {
      const response = await fetch(new URL(path, base));
      if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
      return response.json() as Promise<number | null>;
    };
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
        rows[impl] = (await call(`/${impl}/${name}/rows`)) ?? 0;
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
    const text = figures
      .map((f) => `${f.measure.padEnd(48)} raw ${f.raw.toFixed(1).padStart(9)} ${f.unit.padEnd(4)} dokit ${f.dokit.toFixed(1).padStart(9)} ${f.unit.padEnd(4)} ${f.ratio.toFixed(2)}×${f.target ? ` (target ≤ ${f.target}×)` : ""}`)
      .join("\n");
    return { figures, text };
  } finally {
    await worker.dispose();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // As in bench/run.ts: wrangler's local observability records every invocation in the same process.
  process.env.X_LOCAL_OBSERVABILITY ??= "false";
  process.env.WRANGLER_LOG ??= "none";
  process.env.WRANGLER_SEND_METRICS ??= "false";
  const quick = process.argv.includes("--quick");
  const { text, figures } = await jobsBench({ quick });
  console.log(`\nJobs (one object each; lower is better; ratio is dokit over raw)\n\n${text}`);
  const run = { measure: "jobs", title: "Jobs", command: commandLine("node bench/jobs.ts"), quick, columns: ["raw", "dokit", "dokit/raw"] };
  console.log(`result file: ${recordRun({ ...run, figures: fromPairs(figures, ["raw", "dokit"], ["raw", "dokit"]) }).pathname}`);
}
