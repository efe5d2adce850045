// Objects that are MCP clients hibernate: the notification stream McpClients keeps to
// each server (a GET held open) closes after `streamIdleMs` without use, the runtime
// then evicts the idle object (~10 s locally), and the next call constructs a fresh
// instance that reconnects, lists the catalogue again and answers. The MCP server runs
// here in Node (official server SDK) and counts the streams it holds open.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { z } from "zod";
import { fresh, sleep, textOf } from "./helpers";

const base = new URL(inject("workerUrl"));

/** The runtime's idle eviction under wrangler dev (~10 s), with slack for a loaded machine. */
const EVICTION_MS = 13_000;

let listings = 0;
const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "idle-server", version: "1.0.0" });
  server.registerTool("double", { description: "Doubles", inputSchema: z.object({ n: z.number() }) }, async ({ n }) => ({
    content: [{ type: "text" as const, text: String(n * 2) }],
  }));
  return server;
});

/** Requests the server holds open now: after a call returned, the notification streams. */
let openStreams = 0;
let mcpServer: Server;
let mcpUrl: string;

beforeAll(async () => {
  mcpServer = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    if (body?.toString().includes('"method":"tools/list"')) listings++;
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(key, value);
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, signal: abort.signal, ...(body && req.method !== "GET" && { body }) });
    const response = await handler.fetch(request);
    openStreams++;
    res.on("close", () => openStreams--);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    try {
      if (response.body) for await (const chunk of response.body) res.write(chunk);
    } catch {
      // The client went away mid-stream.
    }
    res.end();
  });
  await new Promise<void>((resolve) => mcpServer.listen(0, "127.0.0.1", resolve));
  mcpUrl = `http://127.0.0.1:${(mcpServer.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  mcpServer.closeAllConnections();
  await new Promise((resolve) => mcpServer.close(resolve));
});

async function act(kind: string, name: string, action: string, body?: unknown): Promise<any> {
  const response = await fetch(new URL(`agents/${kind}/${name}/${action}`, base), body === undefined ? {} : { method: "POST", body: JSON.stringify(body) });
  return response.json();
}

/** Adds the Node server to the object and calls a tool. @returns the object's instance id */
async function connectAndCall(kind: string, name: string): Promise<string> {
  expect(await act(kind, name, "add", { name: "idle", url: mcpUrl, id: "idle" })).toEqual({ id: "idle", state: "ready" });
  const called = await act(kind, name, "call", { serverId: "idle", name: "double", args: { n: 21 } });
  expect(textOf(called.result)).toBe("42");
  return called.instance;
}

describe("McpClients lets its object hibernate", () => {
  it("closes the stream after streamIdleMs (the server stays ready), is evicted, and the next call reconnects on a fresh instance; Infinity keeps it awake", async () => {
    const short = fresh("short");
    const never = fresh("never");
    const [shortInstance, neverInstance] = await Promise.all([connectAndCall("mcp-idle-short", short), connectAndCall("mcp-idle-never", never)]);
    const open = (await act("mcp-idle-short", short, "awake")) as { keepsAwake: string[] };
    expect(open.keepsAwake).toEqual([expect.stringContaining("MCP server idle (" + mcpUrl + "): notification stream open")]);

    // 1 s without use: the stream is closed, the server still shows ready.
    await sleep(1_500);
    const idle = (await act("mcp-idle-short", short, "awake")) as { instance: string; keepsAwake: string[]; servers: Array<{ state: string }> };
    expect(idle.instance).toBe(shortInstance);
    expect(idle.keepsAwake).toEqual([]);
    expect(idle.servers).toMatchObject([{ id: "idle", state: "ready" }]);
    expect((await act("mcp-idle-never", never, "awake")).keepsAwake).toHaveLength(1);

    // Now nothing holds the short one: the runtime evicts it. The other keeps its stream.
    await sleep(EVICTION_MS);
    const listed = listings;
    const again = await act("mcp-idle-short", short, "call", { serverId: "idle", name: "double", args: { n: 5 } });
    expect(again.instance).not.toBe(shortInstance);
    expect(textOf(again.result)).toBe("10");
    expect(listings).toBeGreaterThan(listed); // the catalogue was listed again
    const kept = await act("mcp-idle-never", never, "instance");
    expect(kept.instance).toBe(neverInstance);
  }, 30_000);

  it("with the defaults, is evicted within 30 s + the runtime's idle eviction after a call, and answers the next call", async () => {
    const name = fresh("default");
    const instance = await connectAndCall("mcp-idle-default", name);
    await sleep(200);
    const streams = openStreams;
    expect(streams).toBeGreaterThan(0);
    await sleep(30_000 + EVICTION_MS);
    expect(openStreams).toBeLessThan(streams);
    const again = await act("mcp-idle-default", name, "call", { serverId: "idle", name: "double", args: { n: 4 } });
    expect(again.instance).not.toBe(instance);
    expect(textOf(again.result)).toBe("8");
  }, 60_000);
});
