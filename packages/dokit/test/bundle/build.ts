// The guard's cases and how they resolve: `dokit/<sub>` to src/<sub>/index.ts (also for subpaths
// written but not exported yet), other packages from packages/dokit's and the root's node_modules.
// The build itself (esbuild's flags, minified and gzip-9 sizes) is scripts/bundle-size.ts, which
// the bench's bundle table builds with too.
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type * as esbuild from "esbuild";
import { type BundleResult, bundleSize } from "../../scripts/bundle-size.ts";

export { type BundleResult, topContributors } from "../../scripts/bundle-size.ts";

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

/** Builds one case in memory. @returns its code, sizes and what each input contributes */
export function buildCase(c: BundleCase): Promise<BundleResult> {
  return bundleSize({
    name: c.name,
    source: c.source,
    resolveDir: c.resolveDir ?? fileURLToPath(new URL(".", import.meta.url)),
    ...(c.external && { external: c.external }),
    nodePaths: [`${DOKIT}node_modules`, `${ROOT}node_modules`],
    plugins: [resolvePlugin],
  });
}
