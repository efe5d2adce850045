// The official `useAgent({ onMcpUpdate })` (npm agents/react, unchanged) in headless
// Chromium, against a dokit object with McpClients over real loopback sockets: it
// receives cf_agent_mcp_servers on connect and after each change.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { build } from "esbuild";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { MCPServersState } from "../src/protocol";

const base = new URL(inject("workerUrl"));
const here = new URL(".", import.meta.url).pathname;
let browser: Browser;
let mcpServer: Server;
let mcpUrl: string;
let page: string;

// The page: React renders one component that calls the official hook and records every onMcpUpdate.
const ENTRY = `
import { createElement } from "react";
import { createRoot } from "react-dom/client";
import { useAgent } from "agents/react";
window.updates = [];
function App() {
  useAgent({ agent: "McpAssistant", name: window.OBJECT, host: window.HOST, onMcpUpdate: (mcp) => window.updates.push(mcp) });
  return null;
}
createRoot(document.getElementById("root")).render(createElement(App));
`;

beforeAll(async () => {
  const bundle = await build({
    stdin: { contents: ENTRY, resolveDir: here, loader: "js" },
    bundle: true,
    format: "iife",
    platform: "browser",
    write: false,
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "silent",
  });
  page = bundle.outputFiles[0]?.text ?? "";
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: "node-server", version: "1.0.0" });
    server.registerTool("ping", { description: "Answers pong" }, async () => ({ content: [{ type: "text" as const, text: "pong" }] }));
    return server;
  });
  mcpServer = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(key, value);
    const body = chunks.length && req.method !== "GET" ? Buffer.concat(chunks) : undefined;
    const response = await handler.fetch(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, ...(body && { body }) }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) for await (const chunk of response.body) res.write(chunk);
    res.end();
  });
  await new Promise<void>((resolve) => mcpServer.listen(0, "127.0.0.1", resolve));
  mcpUrl = `http://127.0.0.1:${(mcpServer.address() as AddressInfo).port}/mcp`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
});

afterAll(async () => {
  await browser?.close();
  mcpServer?.closeAllConnections();
  await new Promise((resolve) => mcpServer?.close(resolve));
});

describe("the official useAgent({ onMcpUpdate })", () => {
  it("receives the MCP servers on connect and after each change", async () => {
    const name = `official-${Date.now()}`;
    const tab = await browser.newPage();
    await tab.setContent(`<div id="root"></div><script>window.OBJECT=${JSON.stringify(name)};window.HOST=${JSON.stringify(base.host)}</script>`);
    await tab.addScriptTag({ content: page });
    // SAFETY: runs in the page, where the entry above set `updates` on the global object.
    const updates = () => tab.evaluate(() => (globalThis as unknown as { updates: MCPServersState[] }).updates);
    await expect.poll(updates, { timeout: 8000 }).toEqual([{ servers: {}, tools: [], prompts: [], resources: [] }]);

    const added = await fetch(new URL(`agents/mcp-assistant/${name}/add`, base), {
      method: "POST",
      body: JSON.stringify({ name: "node", url: mcpUrl, id: "node" }),
    });
    expect(await added.json()).toEqual({ id: "node", state: "ready" });
    await expect.poll(async () => (await updates()).at(-1)?.servers.node?.state, { timeout: 8000 }).toBe("ready");
    const last = (await updates()).at(-1) as MCPServersState;
    expect(last.tools).toMatchObject([{ name: "ping", serverId: "node" }]);
    expect(last.servers.node).toMatchObject({ name: "node", server_url: mcpUrl, auth_url: null, error: null });
    expect((await updates()).map((u) => u.servers.node?.state ?? "none")).toEqual(expect.arrayContaining(["none", "connecting", "ready"]));
    await tab.close();
  });
});
