// The bundle table's cases. Each is built as the bundle guard builds its own
// (packages/dokit/scripts/bundle-size.ts: esbuild in-process, the same flags for every case,
// `dokit/<sub>` read from the working tree's source, minified and gzip-9 sizes). Imports resolve
// from bench/ as any package's would: `dokit/<sub>` through the package's exports, the reference
// packages from bench's own dependencies.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { type BundleResult, bundleSize } from "../../packages/dokit/scripts/bundle-size.ts";

export { type BundleResult, topContributors } from "../../packages/dokit/scripts/bundle-size.ts";

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
export function buildCase(c: BundleCase): Promise<BundleResult> {
  return bundleSize({ name: c.name, source: c.source, resolveDir: c.resolveDir ?? BENCH, ...(c.external && { external: c.external }) });
}
