// What a minimal worker weighs once bundled: esbuild in-process with the same flags for every
// bundle (bundle, minify, format esm, platform neutral, conditions workerd/worker/browser plus
// dokit's `@dokit/source`, so `dokit/<sub>` is read from the working tree's source and a stale
// dist/ cannot mislead), cloudflare:* and node:* external; sizes in minified bytes and at gzip
// level 9. The one place both the bundle guard (test/bundle/build.ts, with its ceilings) and the
// bench's bundle table (bench/lib/bundle.ts) build with, so their figures are the same measure.
import { gzipSync } from "node:zlib";
import * as esbuild from "esbuild";

/** One worker to bundle: its entry module's source and how its imports resolve. */
export interface BundleInput {
  name: string;
  /** The entry module's source. */
  source: string;
  /** Directory the entry's imports resolve from. */
  resolveDir: string;
  /** Packages left out besides cloudflare:* and node:*. */
  external?: string[];
  /** esbuild plugins (the guard's resolves `dokit/<sub>` to src/ also for subpaths not exported yet). */
  plugins?: esbuild.Plugin[];
  /** Directories searched for packages after the usual node_modules walk. */
  nodePaths?: string[];
}

/** What a built worker weighs. */
export interface BundleResult {
  name: string;
  minified: number;
  gzip: number;
  code: string;
  /** Input file (relative to the repository or its package) → bytes it contributes to the minified output. */
  inputs: Record<string, number>;
}

/** The flags every bundle is built with. */
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

/** Builds one worker in memory. @returns its code, sizes and what each input contributes */
export async function bundleSize(input: BundleInput): Promise<BundleResult> {
  const result = await esbuild.build({
    ...ESBUILD_FLAGS,
    conditions: [...ESBUILD_FLAGS.conditions],
    mainFields: [...ESBUILD_FLAGS.mainFields],
    external: [...ESBUILD_FLAGS.external, ...(input.external ?? [])],
    stdin: { contents: input.source, resolveDir: input.resolveDir, sourcefile: `${input.name}.ts`, loader: "ts" },
    ...(input.nodePaths && { nodePaths: input.nodePaths }),
    ...(input.plugins && { plugins: input.plugins }),
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const code = result.outputFiles[0]?.text ?? "";
  const inputs: Record<string, number> = {};
  for (const output of Object.values(result.metafile.outputs)) {
    for (const [file, { bytesInOutput }] of Object.entries(output.inputs)) inputs[file.replace(/^.*node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, "")] = bytesInOutput;
  }
  return { name: input.name, minified: Buffer.byteLength(code), gzip: gzipSync(code, { level: 9 }).byteLength, code, inputs };
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
