// The bundle table of `pnpm bench`: a few small applications and every subpath dokit exports (all
// of it, lib/bundle.ts), the reference's client, the MCP SDK's handler alone, and the three bench rooms.
import { fileURLToPath } from "node:url";
import { recordRun, type RunResult } from "./lib/results.ts";
import { type BundleCase, type BundleResult, buildCase, COMPOSITION_CASES, REFERENCE_CASES, subpathCases, topContributors, WORKER } from "./lib/bundle.ts";

const ROOMS = fileURLToPath(new URL("./worker/", import.meta.url));

/** The three bench rooms (bench/worker) as minimal workers. */
const ROOM_CASES: BundleCase[] = [
  { name: "bench room: raw", resolveDir: ROOMS, source: `export { RawRoom } from "./raw.ts";\n${WORKER}` },
  { name: "bench room: dokit", resolveDir: ROOMS, source: `export { DokitRoom } from "./dokit.ts";\n${WORKER}` },
  { name: "bench room: reference (agents)", resolveDir: ROOMS, source: `export { RefRoom } from "./ref.ts";\n${WORKER}` },
];

/** Every case the table shows, in its order. */
const CASES = (): BundleCase[] => [...COMPOSITION_CASES, ...subpathCases(), ...REFERENCE_CASES, ...ROOM_CASES];

/** Builds every available case. @returns rows for the JSON and a text table */
export async function bundleReport(): Promise<{ rows: Omit<BundleResult, "code">[]; text: string }> {
  const rows: (Omit<BundleResult, "code"> & { note?: string })[] = [];
  for (const c of CASES()) {
    try {
      const { code: _code, ...row } = await buildCase(c);
      rows.push(row);
    } catch (error) {
      rows.push({ name: c.name, minified: Number.NaN, gzip: Number.NaN, inputs: {}, note: `build failed: ${(error as Error).message.split("\n")[0]}` });
    }
  }
  const width = Math.max(...rows.map((r) => r.name.length));
  const kb = (n: number) => (Number.isNaN(n) ? "-" : `${(n / 1024).toFixed(1)} KB`);
  const text = [
    `${"worker".padEnd(width)}  ${"minified".padStart(9)}  ${"gzip".padStart(8)}`,
    ...rows.map((r) => `${r.name.padEnd(width)}  ${kb(r.minified).padStart(9)}  ${kb(r.gzip).padStart(8)}${r.note ? `  (${r.note})` : ""}`),
  ].join("\n");
  return { rows, text };
}

/** @returns the bundle rows as the bundle result file's: minified and gzip KB (sizes do not move between runs: one run) */
export function bundleRun(rows: readonly Omit<BundleResult, "code">[]): Omit<RunResult, "command" | "quick"> {
  const kb = (n: number) => (Number.isFinite(n) ? Math.round((n / 1024) * 10) / 10 : undefined);
  return {
    measure: "bundle",
    title: "Bundle sizes",
    columns: ["minified", "gzip"],
    keep: 1,
    figures: rows.map((r) => ({ name: r.name, unit: "KB", values: { minified: kb(r.minified), gzip: kb(r.gzip) } })),
  };
}

// `node bench/bundle.ts` prints the bundle table alone; with --why, the largest inputs of each case.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { text, rows } = await bundleReport();
  console.log(text);
  console.log(`result file: ${recordRun({ ...bundleRun(rows), command: "node bench/bundle.ts", quick: false }).pathname}`);
  if (process.argv.includes("--why")) {
    for (const c of CASES()) {
      const result = await buildCase(c).catch(() => undefined);
      if (!result) continue;
      console.log(`\n${c.name}: ${result.minified} B minified`);
      for (const [input, bytes] of topContributors(result, 12)) console.log(`  ${String(bytes).padStart(7)}  ${input}`);
    }
  }
}
