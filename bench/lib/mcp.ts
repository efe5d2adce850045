// MCP tools/call latency: dokit's McpHandler inside a Durable Object (warm, and
// cold right after an eviction) vs the MCP SDK's own stateless handler in the
// Worker ("ref") and the same SDK handler inside a plain object ("raw"), all
// serving the same one-tool server, called by the official client
// (@modelcontextprotocol/client, pinned to the 2026-07-28 revision).
import { createRequire } from "node:module";
import { type Figure, median, quantile } from "./stats.ts";
import { evictRoom } from "./client.ts";

/** @returns whether the bench should serve MCP: the package exports `dokit/mcp` */
export function mcpExported(): boolean {
  const pkg = createRequire(import.meta.url)("dokit/package.json") as { exports: Record<string, unknown> };
  return "./mcp" in pkg.exports;
}

type McpClient = { callTool(call: { name: string; arguments: Record<string, unknown> }): Promise<{ content: { text: string }[] }> };

async function officialClient(): Promise<{ connect(url: URL): Promise<McpClient & { close(): Promise<void> }> }> {
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  return {
    async connect(url) {
      const client = new Client({ name: "dokit-bench", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
      // No standalone GET stream: an open stream would pin the object and block eviction.
      const transport = new StreamableHTTPClientTransport(url, {
        fetch: (u: string | URL, init?: RequestInit) => (init?.method === "GET" ? Promise.resolve(new Response(null, { status: 405 })) : fetch(u, init)),
      });
      await client.connect(transport);
      // The one tool answers with text content only, the one shape the bench reads.
      return client as unknown as McpClient & { close(): Promise<void> };
    },
  };
}

async function timedCall(client: McpClient, n: number): Promise<number> {
  const start = performance.now();
  const result = await client.callTool({ name: "add", arguments: { a: n, b: 1 } });
  const elapsed = performance.now() - start;
  if (result.content[0]?.text !== String(n + 1)) throw new Error(`mcp: unexpected tools/call result ${JSON.stringify(result)}`);
  return elapsed;
}

/** @returns the MCP figures, or undefined when dokit/mcp is not exported yet */
export async function mcpMeasures(base: URL, warmCalls: number, coldRounds: number, force = false): Promise<Figure[] | undefined> {
  if (!mcpExported() && !force) return undefined;
  const { connect } = await officialClient();
  const run = Date.now().toString(36);
  // raw: the SDK's handler inside a plain object (the floor for an MCP server in a DO);
  // dokit: McpHandler in an object, routed by routeAgentRequest; ref: the SDK's handler in the Worker.
  const clients = {
    raw: await connect(new URL(`/mcp/raw/warm-${run}`, base)),
    dokit: await connect(new URL(`/agents/mcp-room/warm-${run}/mcp`, base)),
    ref: await connect(new URL("/mcp/sdk", base)),
  };
  const impls = ["raw", "dokit", "ref"] as const;
  const warm = { raw: [] as number[], dokit: [] as number[], ref: [] as number[] };
  let n = 0;
  const block = 10;
  for (let round = 0; round < Math.ceil(warmCalls / block) + 3; round++) {
    for (let k = 0; k < impls.length; k++) {
      const impl = impls[(round + k) % impls.length]!;
      for (let i = 0; i < block; i++) {
        const ms = await timedCall(clients[impl], n++);
        if (round >= 3) warm[impl].push(ms); // three warm-up rounds
      }
    }
  }
  await Promise.all(Object.values(clients).map((c) => c.close()));

  // Cold: evict the object (hibernation-style), then the next tools/call wakes a fresh instance.
  const coldName = `cold-${run}`;
  const cold = await connect(new URL(`/agents/mcp-room/${coldName}/mcp`, base));
  await timedCall(cold, 0);
  const coldSamples: number[] = [];
  for (let round = 0; round < coldRounds; round++) {
    await evictRoom(base, "mcp", coldName);
    coldSamples.push(await timedCall(cold, round));
  }
  await cold.close();

  const note = "raw = SDK handler in a plain DO; ref = SDK handler in the Worker";
  const at = (q: number) => ({ raw: quantile(warm.raw, q), dokit: quantile(warm.dokit, q), ref: quantile(warm.ref, q) });
  return [
    { measure: "MCP tools/call, warm", stat: "p50", unit: "ms", values: at(0.5), samples: { raw: warm.raw.length, dokit: warm.dokit.length, ref: warm.ref.length }, baselineNote: note },
    { measure: "MCP tools/call, warm", stat: "p99", unit: "ms", values: at(0.99), baselineNote: note },
    { measure: "MCP tools/call, cold (after eviction)", stat: "median", unit: "ms", values: { dokit: median(coldSamples) }, samples: { dokit: coldSamples.length }, baselineNote: "the SDK handler has no object to evict" },
  ];
}
