// How the bundle table builds a minimal worker: esbuild in-process, the same flags for every case
// (bundle, minify, format esm, platform neutral, conditions workerd/worker/browser plus dokit's
// `@dokit/source`, so `dokit/<sub>` is read from the working tree's source and a stale dist/ cannot
// mislead), cloudflare:* and node:* external. Imports resolve from bench/ as any package's would:
// `dokit/<sub>` through the package's exports, the reference packages from bench's own dependencies.
// Sizes are minified bytes and gzip level 9.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import * as esbuild from "esbuild";

/** A minimal worker to bundle. */
export interface BundleCase {
  name: string;
  /** The entry module's source. */
  source: string;
  /** Directory relative imports in `source` resolve from (default: bench/). */
  resolveDir?: string;
  /** Packages left out besides cloudflare:* and node:* (react is the app's own). */
  external?: string[];
}

/** What a built case weighs. */
export interface BundleResult {
  name: string;
  minified: number;
  gzip: number;
  code: string;
  /** Input file (relative to the repository or its package) → bytes it contributes to the minified output. */
  inputs: Record<string, number>;
}

const BENCH = fileURLToPath(new URL("../", import.meta.url));

/** A worker module's default export, appended to every case. */
export const WORKER = `export default { fetch: () => new Response("ok") };\n`;

/** @returns the subpaths the package exports (`dokit/package.json`'s `exports`, less `./package.json`) */
export function exportedSubpaths(): string[] {
  const pkg = createRequire(import.meta.url)("dokit/package.json") as { exports: Record<string, unknown> };
  return Object.keys(pkg.exports)
    .filter((key) => key !== "./package.json")
    .map((key) => key.slice(2));
}

/**
 * One case per exported subpath: a worker re-exporting everything the subpath exports, so nothing
 * is shaken out. An upper bound per subpath, comparable from run to run; what an application of a
 * few capabilities weighs is the bundle guard's (packages/dokit/test/bundle/, with its ceilings).
 */
export function subpathCases(): BundleCase[] {
  return exportedSubpaths().map((sub) => ({ name: `dokit/${sub}, all of it`, source: `export * from "dokit/${sub}";\n${WORKER}`, external: ["react", "react/jsx-runtime"] }));
}

const DO = `import { DurableObject } from "cloudflare:workers";\n`;

/**
 * Small applications, each what its name says and nothing more: what a user's worker of those
 * capabilities starts at, after tree-shaking (the bundle guard's ceilings are on cases like these).
 */
export const COMPOSITION_CASES: BundleCase[] = [
  {
    name: "lifecycle",
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
export class Room extends DurableObject { lifecycle = Lifecycle.install(this); }
${WORKER}`,
  },
  {
    name: "lifecycle + websockets (echo)",
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
export class Room extends DurableObject {
  webSockets = new WebSockets({ handlers: { onMessage: (c, m) => c.send(m) } });
  lifecycle = Lifecycle.install(this).use(this.webSockets);
}
${WORKER}`,
  },
  {
    name: "lifecycle + websockets + state",
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { State } from "dokit/state";
import { WebSockets } from "dokit/websockets";
export class Room extends DurableObject {
  state = new State({ initialState: { n: 0 } });
  webSockets = new WebSockets({ state: this.state });
  lifecycle = Lifecycle.install(this).use(this.state).use(this.webSockets);
}
${WORKER}`,
  },
];

/** The outside code the table compares with. */
export const REFERENCE_CASES: BundleCase[] = [
  {
    name: "official agents/client (browser)",
    source: `import { AgentClient } from "agents/client";
export const client = new AgentClient({ agent: "room", name: "a", host: "localhost" });
`,
  },
  {
    name: "MCP SDK handler alone (one tool)",
    source: `import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "bench", version: "1.0.0" });
  server.registerTool("add", { inputSchema: z.object({ a: z.number(), b: z.number() }) }, ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
  return server;
});
export default { fetch: (request) => handler.fetch(request) };
`,
  },
];

/** Builds one case in memory. @returns its code, sizes and what each input contributes */
export async function buildCase(c: BundleCase): Promise<BundleResult> {
  const result = await esbuild.build({
    bundle: true,
    minify: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser", "@dokit/source"],
    mainFields: ["module", "main"],
    external: ["cloudflare:*", "node:*", ...(c.external ?? [])],
    stdin: { contents: c.source, resolveDir: c.resolveDir ?? BENCH, sourcefile: `${c.name}.ts`, loader: "ts" },
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
