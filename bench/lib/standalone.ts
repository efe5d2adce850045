// What the two-column measures (jobs.ts, streams.ts, tasks.ts, sessions.ts) share: their worker,
// started and disposed around the measure, a JSON call to it, their figures as printed text, and
// their entry as a script run alone (`node bench/<measure>.ts [--quick] [--rows-only]`), which
// prints the figures and writes the measure's result file.
import { quietWrangler } from "./cli.ts";
import { commandLine, fromPairs, recordRun, ROWS_ONLY_NOTE, type RunResult } from "./results.ts";
import { type BenchWorkerOptions, startBenchWorker, type StartedWorker } from "./worker.ts";

/** A started two-column measure's worker. */
export interface MeasureWorker {
  /** The address the measure talks to: wrangler's proxy worker in front of the user worker. */
  base: URL;
  /** The worker as started (its direct address too). */
  worker: StartedWorker;
  /**
   * GETs `path` below the base and parses the JSON answer; a status other than 2xx, or no answer
   * within two minutes, throws.
   */
  call<T = number>(path: string): Promise<T>;
}

/**
 * Starts the worker of `config` (lib/worker.ts: loopback, no persistence, dokit from source; an
 * inspector and V8 flags with `options`), runs `measure` with it and disposes it, however `measure` ends.
 */
export async function withWorker<T>(config: URL, measure: (worker: MeasureWorker) => Promise<T>, options: BenchWorkerOptions = {}): Promise<T> {
  const worker = await startBenchWorker(config.pathname, options);
  try {
    const base = worker.proxied;
    const call = async <R>(path: string): Promise<R> => {
      const response = await fetch(new URL(path, base), { signal: AbortSignal.timeout(120_000) });
      if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
      return (await response.json()) as R;
    };
    return await measure({ base, worker, call });
  } finally {
    await worker.dispose();
  }
}

/** A figure of two implementations side by side, as the two-column measures keep it. */
export interface SideBySide {
  measure: string;
  unit: string;
  /** The first side over the second. */
  ratio: number;
  /** The bound on the ratio (at most, unless `higherIsBetter`). */
  target?: number;
  /** Whether a higher figure is better (a rate). */
  higherIsBetter?: boolean;
  /** What a reader needs beside the values, printed after them. */
  note?: string;
}

/**
 * @returns the figures as aligned lines: the measure, each side's value and unit (row counts to two
 * decimals, others to one), the ratio and its target
 * @param sides - each side's label and the field holding its value, the ratio's other side last
 */
export function figureText<F extends SideBySide>(figures: readonly F[], sides: readonly [string, keyof F][]): string {
  const width = Math.max(0, ...figures.map((f) => f.measure.length));
  const units = Math.max(0, ...figures.map((f) => f.unit.length));
  return figures
    .map((f) => {
      const digits = f.unit === "rows" ? 2 : 1;
      const values = sides.map(([label, key]) => `${label} ${(f[key] as number).toFixed(digits).padStart(10)} ${f.unit.padEnd(units)}`);
      const ratio = Number.isFinite(f.ratio) ? `${f.ratio.toFixed(2)}×` : "–";
      const target = f.target !== undefined ? ` (target ${f.higherIsBetter ? "≥" : "≤"} ${f.target}×)` : f.higherIsBetter ? " (higher is better)" : "";
      return `${f.measure.padEnd(width)}  ${values.join("  ")}  ${ratio}${target}${f.note ? `; ${f.note}` : ""}`;
    })
    .join("\n");
}

/** A figure of dokit beside the reference (`ratio`: dokit over the reference). */
export interface VersusRef extends SideBySide {
  ref: number;
  dokit: number;
}

/**
 * @returns the result (lib/results.ts) of a measure of dokit beside the reference: the columns
 * dokit, ref and dokit/ref; `rowsOnly` (`--rows-only`) keeps only the row counts, for one run
 */
export function refRun(measure: string, title: string, figures: readonly VersusRef[], rowsOnly = false): Omit<RunResult, "command" | "quick"> {
  const kept = rowsOnly ? figures.filter((f) => f.unit === "rows") : figures;
  return { measure, title, columns: ["dokit", "ref", "dokit/ref"], figures: fromPairs(kept, ["dokit", "ref"], ["dokit", "ref"]), ...(rowsOnly ? { keep: 1, notes: [ROWS_ONLY_NOTE] } : {}) };
}

/** One two-column measure, as its script runs it alone. */
export interface StandaloneMeasure<F> {
  /** The script, as its command line names it (`bench/jobs.ts`). */
  script: string;
  /** The heading printed above the figures. */
  heading: string;
  /** Runs the measure. */
  bench(options: { quick: boolean }): Promise<{ figures: F[]; text: string }>;
  /** The result file's content for the figures (`rowsOnly`: `--rows-only` was given). */
  result(figures: F[], rowsOnly: boolean): Omit<RunResult, "command" | "quick">;
}

/**
 * When the module at `moduleUrl` is the script Node was started with: quiets wrangler and turns its
 * local observability off (as bench/run.ts does), runs the measure (`--quick`: its smoke size),
 * prints its figures and writes its result file (lib/results.ts). Otherwise does nothing.
 */
export async function runStandalone<F>(moduleUrl: string, measure: StandaloneMeasure<F>): Promise<void> {
  if (moduleUrl !== `file://${process.argv[1]}`) return;
  quietWrangler();
  const quick = process.argv.includes("--quick");
  const { text, figures } = await measure.bench({ quick });
  console.log(`\n${measure.heading}\n\n${text}`);
  const run = measure.result(figures, process.argv.includes("--rows-only"));
  console.log(`result file: ${recordRun({ ...run, command: commandLine(`node ${measure.script}`), quick }).pathname}`);
}
