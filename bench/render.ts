// `node bench/render.ts [--check]`: renders bench/RESULTS.md, and the figures table of
// bench/README.md (between its `figures` markers), from the result files in bench/results/ (one per
// measure, lib/results.ts). Each value is the median over the runs a file keeps, with their range;
// a target is checked against its column's median. Older runs live in git history only. `pnpm bench`
// runs this at the end of a full run; `--check` renders nothing and fails when either file is not
// what the result files give; `--quick` prints the tables of the last quick run
// (bench/results/quick/) and writes nothing.
import { readFileSync, writeFileSync } from "node:fs";
import { readResults, RESULTS, type ResultFigure, type ResultFile, summarize } from "./lib/results.ts";

const RESULTS_MD = new URL("./RESULTS.md", import.meta.url);
const README_MD = new URL("./README.md", import.meta.url);
const BEGIN = "<!-- figures: rendered by node bench/render.ts from bench/results/; do not edit -->";
const END = "<!-- end of figures -->";

/** The order of the tables: the measures of `pnpm bench` in its order, then any others by name. */
const ORDER = ["saturation", "open", "wake", "scale", "memory", "echo", "rpc", "fanout", "state", "connect", "startup", "mcp", "events", "presence", "heartbeat", "deadlink", "rooms", "rooms-scale", "rooms-inproc", "jobs", "streams", "tasks", "yjs", "yjs-structs", "sessions", "bundle"];

const isRatio = (column: string) => column.includes("/");

/** @returns a number as the tables show it: ratios to 2–3 decimals, others to 3 significant digits, thousands grouped */
function num(value: number, ratio: boolean): string {
  if (ratio) {
    const fixed = value.toFixed(3).replace(/0$/, "");
    return `${fixed}×`;
  }
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString("en-US");
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1).replace(/\.0$/, "");
  if (abs === 0) return "0";
  return Number(value.toPrecision(3)).toString();
}

/** @returns a cell as "median (min–max)", or its text; a column a target applies to gets ✓ or MISSED */
function cell(figure: ResultFigure, column: string): string {
  const s = summarize(figure.values[column]);
  if (s.text !== undefined) return s.text;
  const ratio = isRatio(column);
  const bare = (v: number) => (ratio ? num(v, true).slice(0, -1) : num(v, false));
  const range = s.min !== undefined && s.max !== undefined && s.min !== s.max ? `${bare(s.min)}–${bare(s.max)}` : undefined;
  if (s.median === undefined) return range ? `${range}${ratio ? "×" : ""}` : "";
  const value = range ? `${num(s.median, ratio)} (${range})` : num(s.median, ratio);
  return `${value}${verdict(figure, column, s.median)}`;
}

/** @returns " ✓" or " MISSED" when a target applies to `column`, else "" */
function verdict(figure: ResultFigure, column: string, median: number): string {
  if (!figure.target || ![figure.target.column].flat().includes(column)) return "";
  const { at, value } = figure.target;
  return (at === "≤" ? median <= value : median >= value) ? " ✓" : " MISSED";
}

/** @returns the target's bound, e.g. "≤ 1.05×" */
function target(figure: ResultFigure): string {
  if (!figure.target) return "";
  const ratio = [figure.target.column].flat().every(isRatio);
  return `${figure.target.at} ${num(figure.target.value, ratio)}${ratio ? "" : ` ${figure.unit}`}`;
}

const escape = (text: string) => text.replaceAll("|", "\\|");

/** @returns one measure's section of RESULTS.md */
function section(file: ResultFile): string {
  const columns = file.columns.filter((column) => file.figures.some((f) => f.values[column] !== undefined));
  const withTargets = file.figures.some((f) => f.target);
  const head = ["figure", "unit", ...(withTargets ? ["target"] : []), ...columns];
  const rows = file.figures.map((f) => [
    escape(f.name) + (f.note ? ` (${escape(f.note)})` : ""),
    f.unit,
    ...(withTargets ? [target(f)] : []),
    ...columns.map((column) => escape(cell(f, column))),
  ]);
  const runs = file.runs === 1 ? "one run" : `${file.runs} runs (median, range)`;
  return [
    `## ${file.title}`,
    "",
    `\`${file.command}\` · ${runs} · ${file.date}${file.commit ? ` · \`${file.commit}\`` : ""} · ${file.machine} · [${file.measure}.json](results/${file.measure}.json)`,
    "",
    `| ${head.join(" | ")} |`,
    `| ${head.map(() => "---").join(" | ")} |`,
    ...rows.map((row) => `| ${row.join(" | ")} |`),
    ...(file.notes?.length ? ["", ...file.notes.map((note) => `- ${note}`)] : []),
  ].join("\n");
}

/** @returns the result files in table order */
function ordered(files: ResultFile[]): ResultFile[] {
  const rank = (m: string) => (ORDER.includes(m) ? ORDER.indexOf(m) : ORDER.length);
  return [...files].sort((a, b) => rank(a.measure) - rank(b.measure) || a.measure.localeCompare(b.measure));
}

/** @returns bench/RESULTS.md */
function resultsMd(files: ResultFile[]): string {
  return `${[
    "# Results",
    "",
    "Rendered by `node bench/render.ts` from the result files in [results/](results/), one per measure, each",
    "holding its latest runs (at most three); do not edit this file, run the measures or the script. Each",
    "value is the median over those runs with their range in brackets; ratios are the first implementation",
    "over the second, paired round by round where the measure pairs them (MEASURES.md); a target is checked",
    "against its column's median. Earlier runs are in git history. How noisy each figure is on this machine:",
    "[MEASURES.md](MEASURES.md#how-noisy-each-figure-is-2-cores-shared).",
    "",
    ...ordered(files).flatMap((file) => [section(file), ""]),
  ]
    .join("\n")
    .trimEnd()}\n`;
}

/** @returns the README's figures: every row with a target, and each measure's date and runs */
function readmeFigures(files: ResultFile[]): string {
  const rows = ordered(files).flatMap((file) =>
    file.figures
      .filter((f) => f.target)
      .map((f) => {
        const columns = [f.target?.column ?? []].flat();
        const values = columns.map((column) => `${columns.length > 1 ? `${column}: ` : ""}${cell(f, column)}`).join("; ");
        return `| ${escape(f.name)} | ${escape(columns.join(", "))} | ${target(f)} | ${escape(values)} | [${file.measure}](RESULTS.md#${anchor(file.title)}), ${file.runs === 1 ? "one run" : `${file.runs} runs`}, ${file.date} |`;
      }),
  );
  return [
    BEGIN,
    "",
    "| figure | column | target | median (range) | measure, runs, date |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
    "",
    END,
  ].join("\n");
}

/** @returns GitHub's anchor of a heading */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} -]/gu, "")
    .replaceAll(" ", "-");

/** @returns the README with its figures replaced */
function readme(current: string, files: ResultFile[]): string {
  const from = current.indexOf(BEGIN);
  const to = current.indexOf(END);
  if (from < 0 || to < from) throw new Error(`bench/README.md: the figures markers are missing ("${BEGIN}" … "${END}")`);
  return current.slice(0, from) + readmeFigures(files) + current.slice(to + END.length);
}

if (process.argv.includes("--quick")) {
  const quick = readResults(new URL("quick/", RESULTS));
  if (quick.length === 0) throw new Error("bench/results/quick/ holds no result file: run pnpm bench --quick first");
  console.log(resultsMd(quick));
  process.exit(0);
}
const files = readResults();
if (files.length === 0) throw new Error("bench/results/ holds no result file");
const results = resultsMd(files);
const currentReadme = readFileSync(README_MD, "utf8");
const nextReadme = readme(currentReadme, files);
if (process.argv.includes("--check")) {
  const stale = [
    ...(readFileSync(RESULTS_MD, "utf8") === results ? [] : ["bench/RESULTS.md"]),
    ...(currentReadme === nextReadme ? [] : ["bench/README.md"]),
  ];
  if (stale.length > 0) {
    console.error(`${stale.join(" and ")} differ from what bench/results/ gives: run node bench/render.ts`);
    process.exit(1);
  }
  console.log("bench/RESULTS.md and bench/README.md's figures match bench/results/");
} else {
  writeFileSync(RESULTS_MD, results);
  writeFileSync(README_MD, nextReadme);
  console.log(`rendered bench/RESULTS.md and bench/README.md's figures from ${files.length} result files`);
}
