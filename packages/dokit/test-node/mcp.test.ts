// McpHandler over real loopback sockets: the Host and Origin rules as a
// browser (or a DNS-rebinding page) meets them, and a server built from
// another copy of the MCP SDK, reached with the official client.
import { request as httpRequest } from "node:http";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, inject, it } from "vitest";
import { fresh, textOf } from "./helpers";

const base = new URL(inject("workerUrl"));
const path = (kebab: string, name: string) => `/agents/${kebab}/${name}/mcp`;

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "loopback", version: "1.0.0" } },
});

type Answer = { status: number; body: string; headers: Record<string, string | string[] | undefined> };

/**
 * POSTs an `initialize` to the worker with exactly the given `Host` and `Origin`
 * (node:http sends the `Host` it is given, as a rebound browser page would).
 */
function post(target: string, headers: { host: string; origin?: string }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        hostname: base.hostname,
        port: base.port,
        path: target,
        method: "POST",
        headers: {
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
          "content-length": Buffer.byteLength(initialize),
          ...headers,
        },
      },
      (incoming) => {
        let body = "";
        incoming.setEncoding("utf8");
        incoming.on("data", (chunk: string) => (body += chunk));
        incoming.on("end", () => resolve({ status: incoming.statusCode ?? 0, body, headers: incoming.headers }));
        incoming.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(initialize);
  });
}

const opened: Client[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((client) => client.close().catch(() => {})));
});

/** Connects the official client over Node's fetch (no `Origin`: a non-browser client). */
async function connect(target: string, modern: boolean): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client(
    { name: "dokit-node-test", version: "1.0.0" },
    modern ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  const transport = new StreamableHTTPClientTransport(new URL(target, base));
  await client.connect(transport);
  opened.push(client);
  return { client, transport };
}

describe("McpHandler Host and Origin rules, default options", () => {
  const evil = "evil.example.com";

  it("refuses a DNS-rebinding request (foreign Host and its own Origin) with 403", async () => {
    const answer = await post(path("mcp-defaults", fresh("rebind")), { host: evil, origin: `http://${evil}` });
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
  });

  it("refuses a foreign Origin on the loopback Host with 403", async () => {
    const answer = await post(path("mcp-defaults", fresh("foreign-origin")), { host: base.host, origin: `https://${evil}` });
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: -32000, message: `Invalid Origin: ${evil}` } });
  });

  it("serves a page on the loopback origin, with CORS headers", async () => {
    const answer = await post(path("mcp-defaults", fresh("loopback-page")), { host: base.host, origin: base.origin });
    expect(answer.status).toBe(200);
    expect(answer.headers["access-control-allow-origin"]).toBe(base.origin);
  });

  it("serves clients without Origin (non-browser), on loopback and on a deployed hostname", async () => {
    const loopback = await post(path("mcp-defaults", fresh("no-origin")), { host: base.host });
    expect(loopback.status).toBe(200);
    const deployed = await post(path("mcp-defaults", fresh("no-origin-deployed")), { host: "myapp.example.com" });
    expect(deployed.status).toBe(200);
    const { client } = await connect(path("mcp-defaults", fresh("official")), true);
    expect(textOf(await client.callTool({ name: "echo", arguments: { text: "hi" } }))).toBe("defaults: hi");
  });
});

describe("McpHandler Host and Origin rules, allowedHosts: [\"myapp.example.com\"]", () => {
  const target = () => path("mcp-same-origin", fresh("same-origin"));

  it("serves the app's own pages, and refuses other origins", async () => {
    const own = await post(target(), { host: "myapp.example.com", origin: "http://myapp.example.com" });
    expect(own.status).toBe(200);
    expect(own.headers["access-control-allow-origin"]).toBe("http://myapp.example.com");
    const other = await post(target(), { host: "myapp.example.com", origin: "http://evil.example.com" });
    expect(other.status).toBe(403);
  });

  it("checks Host on every request, localhost names always allowed", async () => {
    const foreign = await post(target(), { host: "evil.example.com" });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body)).toMatchObject({ error: { code: -32000, message: "Invalid Host: evil.example.com" } });
    const loopback = await post(target(), { host: base.host, origin: base.origin });
    expect(loopback.status).toBe(200);
  });
});

describe.each([
  { lane: "modern (2026-07-28)", modern: true },
  { lane: "legacy (2025 session)", modern: false },
])("McpHandler with an McpServer from another copy of the SDK, $lane lane", ({ modern }) => {
  it("lists and calls a tool with the official client", async () => {
    const { client, transport } = await connect(path("mcp-copied-sdk", fresh("copy")), modern);
    expect(client.getServerVersion()?.name).toBe("copied-sdk");
    if (modern) expect(transport.sessionId).toBeUndefined();
    else expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["echo"]);
    expect(textOf(await client.callTool({ name: "echo", arguments: { text: "hello" } }))).toBe("copied-sdk: hello");
  });
});
