// Bundle sizes of minimal workers, built with esbuild in-process with the
// same flags for every case: bundle, minify, format esm, platform neutral,
// conditions workerd/worker/browser (+ dokit's `source` condition, i.e. src/
// rather than a possibly stale dist/), external cloudflare:* and node:*.
//
// Shared by `pnpm bench` (bundleReport) and the guard test in
// packages/dokit/test/bundle/ (buildCase, dokitCases, FORBIDDEN).
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const DOKIT = `${ROOT}packages/dokit/`;
// esbuild and the reference (npm agents, capnweb, zod, the MCP SDK) are devDependencies of packages/dokit.
const fromDokit = createRequire(`${DOKIT}package.json`);
type Esbuild = typeof import("esbuild");
const esbuild: Esbuild = fromDokit("esbuild");

/** Subpaths listed in packages/dokit/entries.json (what package.json exports). */
export function exportedSubpaths(): string[] {
  return JSON.parse(readFileSync(`${DOKIT}entries.json`, "utf8"));
}

/** Subpaths that have a src/<name>/index.ts, exported or not yet. */
export function sourceSubpaths(): string[] {
  const known = ["lifecycle", "websockets", "callables", "state", "mcp", "mcp-client", "routing", "protocol", "client", "capnweb", "react", "testing", "schedule", "queue", "inspector"];
  return [...new Set([...exportedSubpaths(), ...known])].filter((name) => existsSync(`${DOKIT}src/${name}/index.ts`));
}

/** A minimal worker to bundle. */
export interface BundleCase {
  name: string;
  /** The entry module's source; `dokit/<sub>` resolves to packages/dokit/src/<sub>/index.ts. */
  source: string;
  /** Directory relative imports in `source` resolve from (default: bench/worker). */
  resolveDir?: string;
  /** dokit subpaths the case needs; the case is skipped when one is not available. */
  needs: string[];
  /** Packages left out besides cloudflare:* and node:* (only the react case: react is the app's own). */
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

// Shared preamble: every case is a worker module with a Durable Object class.
const DO = `import { DurableObject } from "cloudflare:workers";\n`;
const WORKER = `export default { fetch: () => new Response("ok") };\n`;

/** The minimal dokit workers: one per subpath, and the combinations that have size targets (test/bundle/bundle.test.ts). */
export const DOKIT_CASES: BundleCase[] = [
  {
    name: "lifecycle",
    needs: ["lifecycle"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
export class Room extends DurableObject { lifecycle = Lifecycle.install(this); }
${WORKER}`,
  },
  {
    name: "lifecycle + websockets",
    needs: ["lifecycle", "websockets"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
export class Room extends DurableObject {
  webSockets = new WebSockets({ handlers: { onMessage: (c, m) => c.send(m) } });
  lifecycle = Lifecycle.install(this).use(this.webSockets);
}
${WORKER}`,
  },
  {
    name: "lifecycle + websockets + getCurrentAgent",
    needs: ["lifecycle", "websockets"],
    source: `${DO}import { getCurrentAgent, Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
export class Room extends DurableObject {
  webSockets = new WebSockets({ handlers: { onMessage: (c, m) => c.send(getCurrentAgent().connection === c ? m : "") } });
  lifecycle = Lifecycle.install(this).use(this.webSockets);
}
${WORKER}`,
  },
  {
    name: "lifecycle + websockets, callables short form",
    needs: ["lifecycle", "websockets"],
    source: `${DO}import { RpcTarget } from "cloudflare:workers";
import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
class Api extends RpcTarget { echo(x) { return x; } }
export class Room extends DurableObject {
  webSockets = new WebSockets({ callables: new Api(), handlers: { onMessage: (c, m) => c.send(m) } });
  lifecycle = Lifecycle.install(this).use(this.webSockets);
}
${WORKER}`,
  },
  {
    name: "lifecycle + callables",
    needs: ["lifecycle", "callables"],
    source: `${DO}import { RpcTarget } from "cloudflare:workers";
import { Lifecycle } from "dokit/lifecycle";
import { Callables } from "dokit/callables";
class Api extends RpcTarget { echo(x) { return x; } }
export class Room extends DurableObject { lifecycle = Lifecycle.install(this).use(new Callables(new Api())); }
${WORKER}`,
  },
  {
    name: "lifecycle + state",
    needs: ["lifecycle", "state"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { State } from "dokit/state";
export class Room extends DurableObject {
  state = new State({ initialState: { count: 0 }, validate: (s) => { if (typeof s.count !== "number") throw new Error("count"); } });
  lifecycle = Lifecycle.install(this).use(this.state);
}
${WORKER}`,
  },
  {
    name: "lifecycle + state + zod schema",
    needs: ["lifecycle", "state"],
    source: `${DO}import { z } from "zod";
import { Lifecycle } from "dokit/lifecycle";
import { State } from "dokit/state";
export class Room extends DurableObject {
  state = new State({ initialState: { count: 0 }, validate: z.object({ count: z.number() }) });
  lifecycle = Lifecycle.install(this).use(this.state);
}
${WORKER}`,
  },
  {
    name: "lifecycle + websockets + state + callables",
    needs: ["lifecycle", "websockets", "state", "callables"],
    source: `${DO}import { RpcTarget } from "cloudflare:workers";
import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
import { Callables } from "dokit/callables";
import { State } from "dokit/state";
class Api extends RpcTarget { echo(x) { return x; } }
export class Room extends DurableObject {
  state = new State({ initialState: { count: 0 }, onChanged: (_s, from) => this.webSockets.broadcastState(from) });
  webSockets = new WebSockets({ state: this.state, callables: new Callables(new Api()), handlers: { onMessage: (c, m) => c.send(m) } });
  lifecycle = Lifecycle.install(this).use(this.state).use(this.webSockets);
}
${WORKER}`,
  },
  {
    name: "lifecycle + websockets + capnweb",
    needs: ["lifecycle", "websockets", "capnweb"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
import { capnweb } from "dokit/capnweb";
export class Room extends DurableObject {
  webSockets = new WebSockets({ capnweb, handlers: { onMessage: (c, m) => c.send(m) } });
  lifecycle = Lifecycle.install(this).use(this.webSockets);
}
${WORKER}`,
  },
  {
    name: "lifecycle + schedule",
    needs: ["lifecycle", "schedule"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { Scheduler } from "dokit/schedule";
export class Room extends DurableObject {
  scheduler = new Scheduler({ callbacks: { remind: (p) => console.log(p) } });
  lifecycle = Lifecycle.install(this).use(this.scheduler);
}
${WORKER}`,
  },
  {
    name: "lifecycle + queue",
    needs: ["lifecycle", "queue"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { Queue } from "dokit/queue";
export class Room extends DurableObject {
  queue = new Queue({ callbacks: { send: (p) => console.log(p) } });
  lifecycle = Lifecycle.install(this).use(this.queue);
}
${WORKER}`,
  },
  {
    // dokit/inspector imported, never installed: the import must add nothing (tree-shaken).
    name: "lifecycle + websockets, inspector imported but not installed",
    needs: ["lifecycle", "websockets", "inspector"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
import { Inspector } from "dokit/inspector";
export class Room extends DurableObject {
  webSockets = new WebSockets({ handlers: { onMessage: (c, m) => c.send(m) } });
  lifecycle = Lifecycle.install(this).use(this.webSockets);
}
${WORKER}`,
  },
  {
    name: "lifecycle + websockets + inspector",
    needs: ["lifecycle", "websockets", "inspector"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
import { Inspector } from "dokit/inspector";
export class Room extends DurableObject {
  webSockets = new WebSockets({ handlers: { onMessage: (c, m) => c.send(m) } });
  inspector = new Inspector({ enabled: true, webSockets: this.webSockets });
  lifecycle = Lifecycle.install(this).use(this.webSockets).use(this.inspector);
}
${WORKER}`,
  },
  {
    name: "routing",
    needs: ["routing"],
    source: `import { routeAgentRequest } from "dokit/routing";
export default { fetch: async (request, env) => (await routeAgentRequest(request, env)) ?? new Response("no route", { status: 404 }) };
`,
  },
  {
    name: "protocol",
    needs: ["protocol"],
    source: `import { kebab, isRpcRequest } from "dokit/protocol";
export default { fetch: (r) => new Response(kebab(r.url) + isRpcRequest({})) };
`,
  },
  {
    name: "mcp (one tool)",
    needs: ["lifecycle", "mcp"],
    source: `${DO}import { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { Lifecycle } from "dokit/lifecycle";
import { McpHandler } from "dokit/mcp";
export class Room extends DurableObject {
  mcp = new McpHandler({ server: () => {
    const server = new McpServer({ name: "bench", version: "1.0.0" });
    server.registerTool("add", { inputSchema: z.object({ a: z.number(), b: z.number() }) }, ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
    return server;
  } });
  lifecycle = Lifecycle.install(this).use(this.mcp);
}
${WORKER}`,
  },
  {
    name: "lifecycle + mcp-client",
    needs: ["lifecycle", "mcp-client"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { McpClients } from "dokit/mcp-client";
export class Room extends DurableObject {
  mcp = new McpClients({ name: "bench", version: "1.0.0" });
  lifecycle = Lifecycle.install(this).use(this.mcp);
  async tools() { await this.lifecycle.start(); return this.mcp.tools(); }
}
${WORKER}`,
  },
  {
    // capnweb is left out: the client loads it with import() only for transport: "capnweb",
    // so a splitting bundler puts it in its own chunk (about 15 KB gzip) that cf-websocket users never fetch.
    name: "client (browser, without the on-demand Cap'n Web chunk)",
    needs: ["client"],
    external: ["capnweb"],
    source: `import { AgentClient } from "dokit/client";
export const client = new AgentClient({ agent: "room", name: "a", host: "localhost" });
`,
  },
  {
    name: "react (browser, react itself and the on-demand Cap'n Web chunk external)",
    needs: ["react"],
    external: ["react", "capnweb"],
    source: `import { useAgent } from "dokit/react";
export function App() { return useAgent({ agent: "room", name: "a", host: "localhost" }); }
`,
  },
];

/** The three bench rooms (bench/worker), the official client, and the MCP SDK handler alone, as minimal workers. */
export const COMPARISON_CASES: BundleCase[] = [
  {
    name: "official agents/client (browser)",
    needs: [],
    source: `import { AgentClient } from "agents/client";
export const client = new AgentClient({ agent: "room", name: "a", host: "localhost" });
`,
  },
  { name: "bench room: raw", needs: [], source: `export { RawRoom } from "./raw.ts";\n${WORKER}` },
  { name: "bench room: dokit", needs: ["lifecycle", "websockets", "state", "callables"], source: `export { DokitRoom } from "./dokit.ts";\n${WORKER}` },
  { name: "bench room: reference (agents)", needs: [], source: `export { RefRoom } from "./ref.ts";\n${WORKER}` },
  {
    name: "MCP SDK handler alone (one tool)",
    needs: [],
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

/**
 * Strings that identify code a bundle must not contain. Each is a literal the
 * minifier keeps (error text, protocol method names, class-name strings, SQL).
 */
export const FORBIDDEN = {
  /** capnweb's own error text (src/rpc.ts). */
  capnweb: "RPC session was shut down by disposing the main stub",
  /** A JSON-RPC method name only the MCP SDK (and MCP code) spells out. */
  mcpSdk: "notifications/initialized",
  /** zod 4's core class-name string, kept by $constructor("$ZodType", …). */
  zod: "$ZodType",
  /** dokit's State table name (src/state/storage.ts). */
  dokitState: "dokit_state",
  /**
   * The Callables capability beyond the JSON-rpc part (argument schemas; src/callables/callables.ts).
   * `dokit/websockets` carries only that part, for `new WebSockets({ callables: target })`.
   */
  dokitCallables: "is not a Standard Schema",
  /** dokit's Scheduler table name (src/schedule/scheduler.ts). */
  dokitScheduler: "dokit_schedules",
  /** dokit's Queue table name (src/queue/queue.ts). */
  dokitQueue: "dokit_queue",
  /** The MCP client SDK's own error text (its Streamable HTTP client transport). */
  mcpClientSdk: "Failed to open SSE stream",
  /** dokit's McpClients registry table (src/mcp-client/registry.ts). */
  dokitMcpClient: "dokit_mcp_servers",
  /** The Inspector's close reason (src/inspector/inspector.ts). */
  dokitInspector: "Closed from the dokit inspector",
  /**
   * The storage behind getCurrentAgent() (src/lifecycle/current.ts), the one module of dokit that
   * imports node:async_hooks: a bundle that never imports getCurrentAgent() leaves it out.
   */
  dokitContext: "node:async_hooks",
  /** croner's own error text (the cron library behind dokit/schedule). */
  croner: "CronPattern: invalid configuration format",
} as const;

// dokit/<sub> → packages/dokit/src/<sub>/index.ts (the package's `source` condition, also for subpaths
// that are written but not exported yet); agents, zod, capnweb and the MCP SDK from packages/dokit.
const resolvePlugin: import("esbuild").Plugin = {
  name: "bench-resolve",
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

/** Builds one case in memory. */
export async function buildCase(c: BundleCase): Promise<BundleResult> {
  const result = await esbuild.build({
    ...ESBUILD_FLAGS,
    conditions: [...ESBUILD_FLAGS.conditions],
    mainFields: [...ESBUILD_FLAGS.mainFields],
    external: [...ESBUILD_FLAGS.external, ...(c.external ?? [])],
    stdin: { contents: c.source, resolveDir: c.resolveDir ?? `${ROOT}bench/worker`, sourcefile: `${c.name}.ts`, loader: "ts" },
    nodePaths: [`${DOKIT}node_modules`, `${ROOT}node_modules`],
    plugins: [resolvePlugin],
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const code = result.outputFiles[0].text;
  const inputs: Record<string, number> = {};
  for (const output of Object.values(result.metafile.outputs)) {
    for (const [file, { bytesInOutput }] of Object.entries(output.inputs)) inputs[file.replace(/^.*node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, "")] = bytesInOutput;
  }
  return { name: c.name, minified: Buffer.byteLength(code), gzip: gzipSync(code, { level: 9 }).byteLength, code, inputs };
}

/** @returns the cases whose subpaths are available (`subpaths` defaults to those with a src/ folder) */
export function availableCases(cases: readonly BundleCase[], subpaths: readonly string[] = sourceSubpaths()): BundleCase[] {
  return cases.filter((c) => c.needs.every((need) => subpaths.includes(need)));
}

/** @returns the top `n` inputs of a build by minified bytes, grouped by package or dokit folder */
export function topContributors(result: BundleResult, n = 6): [string, number][] {
  const groups = new Map<string, number>();
  for (const [file, bytes] of Object.entries(result.inputs)) {
    const key = file.includes("packages/dokit/src/") ? `dokit/${file.split("packages/dokit/src/")[1]}` : file.startsWith("@") ? file.split("/").slice(0, 2).join("/") : file.split("/")[0];
    groups.set(key, (groups.get(key) ?? 0) + bytes);
  }
  return [...groups].sort((a, b) => b[1] - a[1]).slice(0, n);
}

/** Builds every available case. @returns rows for the JSON and a text table */
export async function bundleReport(): Promise<{ rows: Omit<BundleResult, "code">[]; text: string }> {
  const exported = exportedSubpaths();
  const rows: (Omit<BundleResult, "code"> & { note?: string })[] = [];
  for (const c of [...availableCases(DOKIT_CASES), ...availableCases(COMPARISON_CASES)]) {
    try {
      const { code: _code, ...row } = await buildCase(c);
      const unexported = c.needs.filter((n) => !exported.includes(n));
      rows.push(unexported.length ? { ...row, note: `src only, not exported yet: ${unexported.join(", ")}` } : row);
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

// `node bench/bundle.ts` prints the bundle table alone, with the top contributors of each case.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { text } = await bundleReport();
  console.log(text);
  if (process.argv.includes("--why")) {
    for (const c of [...availableCases(DOKIT_CASES), ...availableCases(COMPARISON_CASES)]) {
      const result = await buildCase(c).catch(() => undefined);
      if (!result) continue;
      console.log(`\n${c.name}: ${result.minified} B minified`);
      for (const [input, bytes] of topContributors(result, 12)) console.log(`  ${String(bytes).padStart(7)}  ${input}`);
    }
  }
}
