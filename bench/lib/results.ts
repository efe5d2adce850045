// The bench's result files: one JSON file per measure, bench/results/<measure>.json, holding the
// figures of its latest runs (at most KEPT of them, each figure's value per run, so a reader sees
// the median and the spread), the date, the commit, the machine and the command. A full run of a
// measure writes its file (appending to the runs already there when they were taken by the same
// command on the same machine); a `--quick` run writes bench/results/quick/<measure>.json instead,
// which git ignores, so a smoke run never replaces published figures. bench/render.ts renders
// bench/RESULTS.md and the figures of bench/README.md from these files; older runs live in git
// history only.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import { type Figure, median, middle, ratio } from "./stats.ts";

/** How many runs a result file keeps per figure: the median of three is what a change is judged by. */
export const KEPT = 3;

/**
 * A figure's value in one column: each run's value, oldest first; or, for figures converted from
 * runs whose values were not kept one by one, their median and range over `n` runs; or a text.
 */
export type Cell = number[] | { median?: number; min?: number; max?: number; n?: number } | string;

/** A target: the column (or columns) it applies to, and the bound each one's median must meet. */
export interface Target {
  column: string | string[];
  at: "≤" | "≥";
  value: number;
}

/** One row of a measure's table. */
export interface ResultFigure {
  /** What the row is, e.g. "echo round trip, 10 open, p50". Runs are merged by this name. */
  name: string;
  /** The unit of the value columns ("×" for a ratio column is implied). */
  unit: string;
  target?: Target;
  /** Column → value(s); a column missing from a row is shown empty. */
  values: Record<string, Cell>;
  /** What a reader needs beside the values. */
  note?: string;
}

/** A measure's result file. */
export interface ResultFile {
  /** The measure's `--only=` name (or the script's name for a measure run alone). */
  measure: string;
  /** The heading of its table in RESULTS.md. */
  title: string;
  /** The date of the newest run, YYYY-MM-DD. */
  date: string;
  /** The short commit of the newest run (with `+` when the tree had changes). */
  commit?: string;
  /** The machine and versions. */
  machine: string;
  /** The command the runs were taken with. */
  command: string;
  /** How many runs the figures come from. */
  runs: number;
  /** The columns, in order. */
  columns: string[];
  figures: ResultFigure[];
  /** Conditions and findings a reader needs to read the figures (method lives in MEASURES.md). */
  notes?: string[];
}

/** bench/results/ */
export const RESULTS = new URL("../results/", import.meta.url);

/** @returns the machine and versions as one line */
export function machineLine(): string {
  const require = createRequire(import.meta.url);
  const fromWrangler = createRequire(require.resolve("wrangler"));
  const fromMiniflare = createRequire(fromWrangler.resolve("miniflare"));
  const version = (from: NodeJS.Require, name: string) => (from(`${name}/package.json`) as { version: string }).version;
  const cpu = os.cpus()[0]?.model ?? "?";
  return `${os.cpus().length} cores (${cpu}), Node ${process.versions.node}, workerd ${version(fromMiniflare, "workerd")}, wrangler ${version(fromWrangler, "wrangler")}`;
}

/** @returns the short commit of the working tree, `+` when it has changes; undefined outside git */
function commit(): string | undefined {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "packages/dokit/src", "bench"], { encoding: "utf8" }).trim();
    return dirty ? `${head}+` : head;
  } catch {
    return undefined;
  }
}

/** @returns the values of a cell as a list of runs (a converted cell counts as one run at its median) */
function runsOf(cell: Cell | undefined): number[] {
  if (cell === undefined || typeof cell === "string") return [];
  if (Array.isArray(cell)) return cell;
  return cell.median === undefined ? [] : [cell.median];
}

/** What one run of a measure found: its figures with one value per column. */
export interface RunResult {
  measure: string;
  title: string;
  command: string;
  quick: boolean;
  columns: string[];
  figures: { name: string; unit: string; target?: Target; values: Record<string, number | string | undefined>; note?: string }[];
  notes?: string[];
  /** How many runs to keep ({@link KEPT} unless said): 1 for figures that do not move between runs. */
  keep?: number;
}

/**
 * Writes one run's figures to the measure's result file: a full run to bench/results/<measure>.json,
 * appended to the runs there when those were taken by the same command on the same machine (the
 * last {@link KEPT} kept), else replacing them; a quick run to bench/results/quick/<measure>.json.
 * @returns the file written
 */
export function recordRun(run: RunResult): URL {
  const dir = run.quick ? new URL("quick/", RESULTS) : RESULTS;
  mkdirSync(dir, { recursive: true });
  const file = new URL(`${run.measure}.json`, dir);
  const machine = machineLine();
  const previous = !run.quick && existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as ResultFile) : undefined;
  const continues = previous !== undefined && previous.command === run.command && previous.machine === machine;
  const keep = run.keep ?? KEPT;
  const runs = continues ? Math.min(previous.runs + 1, keep) : 1;
  const figures: ResultFigure[] = run.figures.map((f) => {
    const before = continues ? previous.figures.find((p) => p.name === f.name) : undefined;
    const values: Record<string, Cell> = {};
    for (const [column, value] of Object.entries(f.values)) {
      if (value === undefined || (typeof value === "number" && !Number.isFinite(value))) continue;
      // Four significant digits: more than any figure here resolves, few enough to read in a diff.
      values[column] = typeof value === "string" ? value : [...runsOf(before?.values[column]), Number(value.toPrecision(4))].slice(-keep);
    }
    return { name: f.name, unit: f.unit, ...(f.target && { target: f.target }), values, ...(f.note && { note: f.note }) };
  });
  const result: ResultFile = {
    measure: run.measure,
    title: run.title,
    date: new Date().toISOString().slice(0, 10),
    commit: commit(),
    machine,
    command: run.command,
    runs,
    columns: run.columns,
    figures,
    ...(run.notes?.length && { notes: run.notes }),
  };
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}

/** The note of a result file written with `--rows-only` (streams.ts, tasks.ts, sessions.ts). */
export const ROWS_ONLY_NOTE = "Rows written only (--rows-only): exact counts, the same on any machine; the run's timings were not kept.";

/** The columns of the raw / dokit / reference measures. */
export const IMPL_COLUMNS = ["raw", "dokit", "ref", "dokit/raw", "dokit/ref"];

/** @returns a figure of run.ts's table as a result row: each implementation's value and the ratios */
export function fromFigure(f: Figure): RunResult["figures"][number] {
  const dokitToRaw = f.paired?.["dokit/raw"] ?? ratio(f.values.dokit, f.values.raw);
  const dokitToRef = f.paired?.["dokit/ref"] ?? ratio(f.values.dokit, f.values.ref);
  return {
    name: `${f.measure}, ${f.stat}`,
    unit: f.unit,
    ...(f.target !== undefined && { target: { column: "dokit/raw", at: f.higherIsBetter ? "≥" : "≤", value: f.target } as Target }),
    values: { raw: f.values.raw, dokit: f.values.dokit, ref: f.values.ref, "dokit/raw": dokitToRaw, "dokit/ref": dokitToRef },
    ...((f.baselineNote || f.note) && { note: [f.baselineNote, f.note].filter(Boolean).join("; ") }),
  };
}

/** @returns every result file of `dir` (bench/results/ by default), by measure name */
export function readResults(dir: URL = RESULTS): ResultFile[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json") && !name.startsWith("latest"))
    .map((name) => JSON.parse(readFileSync(new URL(name, dir), "utf8")) as ResultFile);
}

/** @returns a cell's median and its spread: min and max over the runs (undefined when one run) */
export function summarize(cell: Cell | undefined): { median?: number; min?: number; max?: number; n: number; text?: string } {
  if (cell === undefined) return { n: 0 };
  if (typeof cell === "string") return { n: 1, text: cell };
  if (Array.isArray(cell)) return { median: middle(cell), min: Math.min(...cell), max: Math.max(...cell), n: cell.length };
  return { ...cell, n: cell.n ?? 1 };
}

/** A figure of two implementations side by side with their ratio (jobs.ts, yjs.ts). */
interface PairFigure {
  measure: string;
  stat?: string;
  unit: string;
  ratio: number;
  target?: number | string;
}

/**
 * @returns figures of two implementations as result rows: the columns `a`, `b` and `a/b`
 * @param keys - the figure's fields holding each side's value, e.g. `["dokit", "party"]`
 * @param columns - the columns' names, e.g. `["dokit", "y-partyserver"]`
 */
export function fromPairs<F extends PairFigure>(figures: readonly F[], keys: [keyof F, keyof F], columns: [string, string]): RunResult["figures"] {
  const ratioColumn = `${columns[0]}/${columns[1]}`;
  return figures.map((f) => {
    const bound = typeof f.target === "string" ? /^([≤≥])\s*([\d.]+)/.exec(f.target) : undefined;
    const target: Target | undefined =
      typeof f.target === "number" ? { column: ratioColumn, at: "≤", value: f.target } : bound ? { column: ratioColumn, at: bound[1] as "≤" | "≥", value: Number(bound[2]) } : undefined;
    return {
      name: f.stat && f.stat !== f.unit ? `${f.measure}, ${f.stat}` : f.measure,
      unit: f.unit,
      ...(target && { target }),
      values: { [columns[0]]: f[keys[0]] as number, [columns[1]]: f[keys[1]] as number, [ratioColumn]: f.ratio },
    };
  });
}

/** @returns the command line a measure ran with, less the options that only choose or show measures */
export function commandLine(prefix: string): string {
  const kept = process.argv.slice(2).filter((a) => !a.startsWith("--only=") && a !== "--verbose" && a !== "--quick");
  return [prefix, ...kept].join(" ");
}

/**
 * Writes the result file of a measure run alone (`node bench/<measure>.ts`), whose figures are in
 * run.ts's shape. @returns the file written
 */
export function recordFigures(measure: string, title: string, script: string, figures: readonly Figure[]): URL {
  const quick = process.argv.includes("--quick");
  return recordRun({ measure, title, command: commandLine(`node ${script}`), quick, columns: IMPL_COLUMNS, figures: figures.map(fromFigure) });
}
