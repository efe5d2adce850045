import { readFileSync } from "node:fs";
import { defineConfig } from "tsdown";

// entries.json is the one list of subpaths; scripts/exports.ts generates
// package.json#exports from it, and `pnpm build` fails when they differ.
const entries: string[] = JSON.parse(readFileSync(new URL("./entries.json", import.meta.url), "utf8"));

export default defineConfig({
  entry: Object.fromEntries(entries.map((name) => [`${name}/index`, `src/${name}/index.ts`])),
  format: "esm",
  platform: "neutral",
  dts: true,
  clean: true,
  treeshake: true,
  // The build's plugin timings are a diagnosis, not a result: a passing build prints none.
  checks: { bundlerTimings: false },
  // One build for every subpath: the shared core becomes one chunk, so
  // `instanceof DokitError` holds across subpaths.
  deps: { neverBundle: [/^cloudflare:/, /^node:/, "capnweb", /^@modelcontextprotocol\//, "react", "partysocket", "yjs"] },
});
