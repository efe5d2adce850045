// How a minimal worker is bundled: esbuild in-process, the same flags for every
// case (bundle, minify, format esm, platform neutral, conditions
// workerd/worker/browser plus dokit's source condition, so `dokit/<sub>` is read
// from src/ and a stale dist/ cannot mislead), external cloudflare:* and node:*.
// Sizes are minified bytes and gzip level 9. Used by the guard test here and by
// `pnpm bench`'s bundle table (bench/bundle.ts).
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import * as esbuild from "esbuild";

const DOKIT = fileURLToPath(new URL("../../", import.meta.url));
const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));

/** A minimal worker to bundle. */
export interface BundleCase {
  name: string;
  /** The entry module's source; `dokit/<sub>` resolves to packages/dokit/src/<sub>/index.ts. */
  source: string;
  /** Directory relative imports in `source` resolve from (default: this folder). */
  resolveDir?: string;
  /** dokit subpaths the case needs; the case is skipped when one is not available. */
  needs: string[];
  /** Packages left out besides cloudflare:* and node:* (react is the app's own; capnweb loads on demand). */
  external?: string[];
}

/** What a built case weighs. */
export interface BundleResult {
  name: string;
  minified: number;
  gzip: number;
  code: string;
  /** Input file (relative to the repo) → bytes it contributes to the minified output. */
  inputs: Record<string, number>;
}

/** @returns the subpaths listed in packages/dokit/entries.json (what package.json exports) */
export function exportedSubpaths(): string[] {
  return JSON.parse(readFileSync(`${DOKIT}entries.json`, "utf8")) as string[];
}

/** @returns the subpaths that have a src/<name>/index.ts, exported or not yet */
export function sourceSubpaths(): string[] {
  const known = ["lifecycle", "websockets", "callables", "state", "mcp", "mcp-client", "routing", "protocol", "client", "capnweb", "react", "testing", "schedule", "queue", "inspector"];
  return [...new Set([...exportedSubpaths(), ...known])].filter((name) => existsSync(`${DOKIT}src/${name}/index.ts`));
}

/** @returns the cases whose subpaths are available (`subpaths` defaults to those with a src/ folder) */
export function availableCases(cases: readonly BundleCase[], subpaths: readonly string[] = sourceSubpaths()): BundleCase[] {
  return cases.filter((c) => c.needs.every((need) => subpaths.includes(need)));
}

// dokit/<sub> → packages/dokit/src/<sub>/index.ts (the package's source condition, also for subpaths
// that are written but not exported yet); agents, zod, capnweb and the MCP SDK from packages/dokit.
const resolvePlugin: esbuild.Plugin = {
  name: "dokit-source",
  setup(build) {
    build.onResolve({ filter: /^dokit\/[a-z-]+$/ }, (args) => {
      const path = `${DOKIT}src/${args.path.slice(6)}/index.ts`;
      return existsSync(path) ? { path } : { errors: [{ text: `${args.path}: ${path} does not exist` }] };
    });
  },
};

/** The flags every case is built with. */
export const ESBUILD_FLAGS = {
  bundle: true,
  minify: true,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  conditions: ["workerd", "worker", "browser", "@dokit/source"],
  mainFields: ["module", "main"],
  external: ["cloudflare:*", "node:*"],
} as const;

/** Builds one case in memory. @returns its code, sizes and what each input contributes */
export async function buildCase(c: BundleCase): Promise<BundleResult> {
  const result = await esbuild.build({
    ...ESBUILD_FLAGS,
    conditions: [...ESBUILD_FLAGS.conditions],
    mainFields: [...ESBUILD_FLAGS.mainFields],
    external: [...ESBUILD_FLAGS.external, ...(c.external ?? [])],
    stdin: { contents: c.source, resolveDir: c.resolveDir ?? fileURLToPath(new URL(".", import.meta.url)), sourcefile: `${c.name}.ts`, loader: "ts" },
    nodePaths: [`${DOKIT}node_modules`, `${ROOT}node_modules`],
    plugins: [resolvePlugin],
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const code = result.outputFiles[0]?.text ?? "";
  const inputs: Record<string, number> = {};
  for (const output of Object.values(result.metafile.outputs)) {
    for (const [file, { bytesInOutput }] of Object.entries(output.inputs)) inputs[file.replace(/^.*node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, "")] = bytesInOutput;
  }
  return { name: c.name, minified: Buffer.byteLength(code), gzip: gzipSync(code, { level: 9 }).byteLength, code, inputs };
}

/** @returns the top `n` inputs of a build by minified bytes, grouped by package or dokit folder */
export function topContributors(result: BundleResult, n = 6): [string, number][] {
  const groups = new Map<string, number>();
  for (const [file, bytes] of Object.entries(result.inputs)) {
    const key = file.includes("packages/dokit/src/") ? `dokit/${file.split("packages/dokit/src/")[1]}` : file.startsWith("@") ? file.split("/").slice(0, 2).join("/") : (file.split("/")[0] ?? file);
    groups.set(key, (groups.get(key) ?? 0) + bytes);
  }
  return [...groups].sort((a, b) => b[1] - a[1]).slice(0, n);
}
