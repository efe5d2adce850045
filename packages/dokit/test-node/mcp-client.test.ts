// McpClients over real loopback sockets: an object in the worker started by
// wrangler connects to an MCP server running here in Node with the official
// server SDK, and protocol clients (dokit's and the official one) receive
// cf_agent_mcp_servers.
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { createMcpHandler, McpServer, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { AgentClient as OfficialClient } from "agents/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { z } from "zod";
import { AgentClient } from "../src/client";
import type { MCPServersState } from "../src/protocol";
import { fresh, sleep, textOf, until } from "./helpers";

const base = new URL(inject("workerUrl"));

// ------------------------------------------------------------ a Node MCP server

let calls = 0;
const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "node-server", version: "1.0.0" }, { instructions: "Runs in Node." });
  server.registerTool("double", { description: "Doubles", inputSchema: z.object({ n: z.number() }) }, async ({ n }) => {
    calls++;
    return { content: [{ type: "text" as const, text: String(n * 2) }] };
  });
  return server;
});

/** A 2025-era server (the SDK's Streamable HTTP transport, stateless): no server/discover, so the client falls back to initialize. */
let legacyInitializes = 0;
async function legacyHandle(request: Request): Promise<Response> {
  if (request.method === "POST" && (await request.clone().text()).includes('"method":"initialize"')) legacyInitializes++;
  const server = new McpServer({ name: "legacy-server", version: "1.0.0" });
  server.registerTool("triple", { description: "Triples", inputSchema: z.object({ n: z.number() }) }, async ({ n }) => ({
    content: [{ type: "text" as const, text: String(n * 3) }],
  }));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  return transport.handleRequest(request);
}

/** Serves `handle` (a fetch-style handler) on a Node HTTP server. */
function serve(handle: (request: Request) => Promise<Response> | Response): Server {
  return createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(key, value);
    const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, ...(body && req.method !== "GET" && { body }) });
    const response = await handle(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) for await (const chunk of response.body) res.write(chunk);
    res.end();
  });
}

let mcpServer: Server;
let legacyServer: Server;
let hangServer: Server;
let mcpUrl: string;
let legacyUrl: string;
let hangUrl: string;
let closedUrl: string;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  mcpServer = serve((request) => handler.fetch(request));
  mcpUrl = `${await listen(mcpServer)}/mcp`;
  legacyServer = serve(legacyHandle);
  legacyUrl = `${await listen(legacyServer)}/mcp`;
  // Accepts the connection and never answers.
  hangServer = createServer(() => undefined);
  hangUrl = `${await listen(hangServer)}/mcp`;
  // A port that was open a moment ago: nothing listens there now.
  const closing = createServer();
  closedUrl = `${await listen(closing)}/mcp`;
  await new Promise((resolve) => closing.close(resolve));
});

afterAll(async () => {
  for (const server of [mcpServer, legacyServer, hangServer]) server.closeAllConnections();
  await Promise.all([mcpServer, legacyServer, hangServer].map((server) => new Promise((r) => server.close(r))));
});

// ----------------------------------------------------------------- the object

const objectUrl = (name: string, action: string) => new URL(`agents/mcp-assistant/${name}/${action}`, base);
async function act(name: string, action: string, body?: unknown): Promise<any> {
  const response = await fetch(objectUrl(name, action), body === undefined ? {} : { method: "POST", body: JSON.stringify(body) });
  return response.json();
}

describe("McpClients over loopback", () => {
  it("connects to a Node MCP server (official server SDK), lists and calls its tools, and again after a restart", async () => {
    const name = fresh("node");
    const added = await act(name, "add", { name: "node", url: mcpUrl, id: "node" });
    expect(added).toEqual({ id: "node", state: "ready" });
    const state = (await act(name, "state")) as MCPServersState;
    expect(state.servers.node).toMatchObject({ name: "node", server_url: mcpUrl, state: "ready", instructions: "Runs in Node.", error: null });
    expect(state.tools).toMatchObject([{ name: "double", serverId: "node" }]);
    expect(textOf(await act(name, "call", { serverId: "node", name: "double", args: { n: 21 } }))).toBe("42");

    await act(name, "restart");
    await sleep(100);
    // A fresh instance: the registry comes from SQLite, the connection on first use.
    const before = calls;
    expect(textOf(await act(name, "call", { serverId: "node", name: "double", args: { n: 5 } }))).toBe("10");
    expect(calls).toBe(before + 1);
    const after = (await act(name, "ready")) as MCPServersState;
    expect(after.tools.map((t) => t.name)).toEqual(["double"]);
  });

  it("marks a server that went away while ready as failed, with the caller told, and reconnects on the next use", async () => {
    // Its own server on its own port, so it can be stopped and started again there.
    const own = serve((request) => handler.fetch(request));
    const url = `${await listen(own)}/mcp`;
    const port = Number(new URL(url).port);
    const name = fresh("gone");
    expect(await act(name, "add", { name: "own", url, id: "own" })).toEqual({ id: "own", state: "ready" });
    expect(textOf(await act(name, "call", { serverId: "own", name: "double", args: { n: 2 } }))).toBe("4");

    own.closeAllConnections();
    await new Promise((resolve) => own.close(resolve));
    const failed = await act(name, "call", { serverId: "own", name: "double", args: { n: 3 } });
    expect(failed).toMatchObject({ code: "SERVER_UNAVAILABLE", error: "dokit: MCP server own failed: Network connection lost." });
    expect(((await act(name, "state")) as MCPServersState).servers.own).toMatchObject({ state: "failed", error: expect.any(String) });

    const again = serve((request) => handler.fetch(request));
    await new Promise<void>((resolve) => again.listen(port, "127.0.0.1", resolve));
    try {
      expect(textOf(await act(name, "call", { serverId: "own", name: "double", args: { n: 5 } }))).toBe("10");
      expect(((await act(name, "state")) as MCPServersState).servers.own).toMatchObject({ state: "ready", error: null });
    } finally {
      again.closeAllConnections();
      await new Promise((resolve) => again.close(resolve));
    }
  });

  it("fails a server whose TLS certificate is not trusted, with a message, and never sends it the request", async () => {
    // A real MCP server behind https with a self-signed certificate (a test-only key, in fixtures/).
    let reached = 0;
    const fixture = (file: string) => readFileSync(join(import.meta.dirname, "fixtures", file));
    const tls = createHttpsServer({ key: fixture("self-signed.key"), cert: fixture("self-signed.crt") }, () => void reached++);
    await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
    try {
      const url = `https://127.0.0.1:${(tls.address() as AddressInfo).port}/mcp`;
      const name = fresh("tls");
      const added = await act(name, "add", { name: "tls", url, id: "tls" });
      expect(added).toMatchObject({ id: "tls", state: "failed" });
      expect(added.error).toEqual(expect.any(String));
      expect(added.error).not.toMatch(/\n\s+at /);
      expect(reached).toBe(0);
      expect(await act(name, "call", { serverId: "tls", name: "double", args: { n: 1 } })).toMatchObject({ code: "SERVER_UNAVAILABLE" });
    } finally {
      tls.closeAllConnections();
      await new Promise((resolve) => tls.close(resolve));
    }
  });

  it("connects to a 2025-era server too (the client SDK negotiates the era)", async () => {
    const name = fresh("legacy");
    expect(await act(name, "add", { name: "legacy", url: legacyUrl, id: "legacy" })).toEqual({ id: "legacy", state: "ready" });
    const state = (await act(name, "state")) as MCPServersState;
    expect(state.tools).toMatchObject([{ name: "triple", serverId: "legacy" }]);
    expect(textOf(await act(name, "call", { serverId: "legacy", name: "triple", args: { n: 3 } }))).toBe("9");
    expect(legacyInitializes).toBeGreaterThan(0); // the 2025 handshake ran
  });

  it("fails an unreachable port and a server that never answers, with a message, without blocking the others", async () => {
    const name = fresh("bad");
    const [closed, hang, good] = await Promise.all([
      act(name, "add", { name: "closed", url: closedUrl, id: "closed" }),
      act(name, "add", { name: "hang", url: hangUrl, id: "hang" }),
      act(name, "add", { name: "good", url: mcpUrl, id: "good" }),
    ]);
    expect(closed).toMatchObject({ state: "failed" });
    expect(closed.error).toBeTruthy();
    expect(hang).toMatchObject({ state: "failed", error: expect.stringMatching(/timed out after 1500 ms/) });
    expect(good).toEqual({ id: "good", state: "ready" });
    const refused = await act(name, "call", { serverId: "closed", name: "double", args: { n: 1 } });
    expect(refused).toMatchObject({ code: "SERVER_UNAVAILABLE" });
  });
});

describe("cf_agent_mcp_servers over real sockets", () => {
  it("reaches dokit's client (onMcpUpdate, client.mcp) and the official client, never a suppressed connection", async () => {
    const name = fresh("frames");
    const updates: MCPServersState[] = [];
    const ours = new AgentClient({ agent: "McpAssistant", name, host: base.host, onMcpUpdate: (mcp) => updates.push(mcp) });
    const official = new OfficialClient({ agent: "McpAssistant", name, host: base.host });
    const officialFrames: { type: string; mcp?: MCPServersState }[] = [];
    official.addEventListener("message", (event) => {
      const data = (event as MessageEvent).data;
      if (typeof data === "string") officialFrames.push(JSON.parse(data));
    });
    const sensor = new AgentClient({ agent: "McpAssistant", name, host: base.host, query: { client: "sensor" } });
    const sensorFrames: string[] = [];
    sensor.addEventListener("message", (event) => sensorFrames.push(String((event as MessageEvent).data)));
    await Promise.all([ours.ready, official.ready]);
    await until(() => sensor.readyState === 1, "the sensor connection", 5000);
    await until(() => updates.length > 0, "the connect frame", 5000);
    expect(updates[0]).toEqual({ servers: {}, tools: [], prompts: [], resources: [] });

    await act(name, "add", { name: "node", url: mcpUrl, id: "node" });
    await until(() => ours.mcp?.servers.node?.state === "ready", "ready on dokit's client", 5000);
    await until(() => officialFrames.some((f) => f.type === "cf_agent_mcp_servers" && f.mcp?.servers.node?.state === "ready"), "ready on the official client", 5000);
    expect(updates.map((u) => u.servers.node?.state).filter(Boolean)).toEqual(expect.arrayContaining(["connecting", "ready"]));
    expect(ours.mcp?.tools).toMatchObject([{ name: "double", serverId: "node" }]);

    await act(name, "remove", { id: "node" });
    await until(() => ours.mcp !== undefined && Object.keys(ours.mcp.servers).length === 0, "the removal", 5000);
    await sleep(100);
    expect(sensorFrames.filter((f) => f.includes("cf_agent_"))).toEqual([]);
    ours.close();
    official.close();
    sensor.close();
  });
});
