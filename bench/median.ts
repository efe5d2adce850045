// `node bench/median.ts a.json b.json c.json`: the median of several bench runs
// (bench/results/*.json files written by run.ts), figure by figure, with every run's
// dokit/raw ratio beside it, as a Markdown table.
import { readFileSync } from "node:fs";
import { median, ratio } from "./lib/stats.ts";

type Run = {
  figures: { measure: string; stat: string; unit: string; values: Record<string, number>; target?: number; higherIsBetter?: boolean; paired?: { "dokit/raw"?: number } }[];
};
const runs = process.argv.slice(2).map((file) => JSON.parse(readFileSync(file, "utf8")) as Run);
if (runs.length === 0) throw new Error("usage: node bench/median.ts run1.json run2.json run3.json");
const fmt = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? "-" : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(3));
const x = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? "-" : `${v.toFixed(2)}×`);
const known = (v: number | undefined): v is number => v !== undefined && !Number.isNaN(v);
console.log(`| measure | stat | raw | dokit | ref | dokit/raw (median) | dokit/raw per run | target |`);
console.log(`|---|---|---|---|---|---|---|---|`);
for (const [i, figure] of runs[0]!.figures.entries()) {
  const same = runs.map((run) => run.figures.find((f) => f.measure === figure.measure && f.stat === figure.stat) ?? run.figures[i]!);
  const med = (impl: string) => median(same.map((f) => f.values[impl]).filter(known));
  // Each run's ratio compares rooms measured side by side (paired round by round where the figure says so);
  // the median of those ratios, not the ratio of the columns' medians, which would set one run's raw against another's dokit.
  const perRun = same.map((f) => f.paired?.["dokit/raw"] ?? ratio(f.values.dokit, f.values.raw));
  const m = median(perRun.filter(known));
  const target = figure.target === undefined ? "" : `${figure.higherIsBetter ? "≥" : "≤"} ${figure.target.toFixed(2)}×`;
  const miss = figure.target !== undefined && m !== undefined && (figure.higherIsBetter ? m < figure.target : m > figure.target);
  console.log(`| ${figure.measure} | ${figure.stat} (${figure.unit}) | ${fmt(med("raw"))} | ${fmt(med("dokit"))} | ${fmt(med("ref"))} | **${x(m)}**${miss ? " missed" : ""} | ${perRun.map(x).join(" / ")} | ${target} |`);
}
