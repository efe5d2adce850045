import { evictDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { openSocket, type TestSocket } from "dokit/testing";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { fresh, textOf } from "../../test-helpers";
import type { AddedServer, ToolResult } from "../src/api";

// The Worker's own fetch (typed by GlobalProps in env.d.ts): requests go through its routing.
const worker = exports.default;
// A loopback host, as under `wrangler dev`: the default URL policy allows http and loopback servers there.
const ORIGIN = "http://localhost";
const counterUrl = (counter: string) => `${ORIGIN}/agents/mcp-counter/${counter}/mcp`;

type Servers = { servers: Record<string, { name: string; server_url: string; state: string; error: string | null; auth_url: string | null }>; tools: { name: string; serverId: string }[] };
type McpFrame = { type: "cf_agent_mcp_servers"; mcp: Servers };
type CounterFrame = { type: "cf_agent_state"; state: { count: number } };

/** Opens a browser-like connection to an assistant and reads its connect sequence. @returns the socket and the first server list */
async function connect(name: string, origin = ORIGIN): Promise<{ socket: TestSocket; mcp: Servers }> {
  const socket = await openSocket(worker, `${origin}/agents/assistant/${name}`);
  expect(await socket.nextJSON()).toEqual({ type: "cf_agent_identity", name, agent: "assistant" });
  const frame = await socket.nextJSON<McpFrame>();
  expect(frame.type).toBe("cf_agent_mcp_servers");
  return { socket, mcp: frame.mcp };
}

/** Reads frames until a `cf_agent_mcp_servers` frame that passes `check`. */
async function mcpFrame(socket: TestSocket, check: (mcp: Servers) => boolean, timeout = 8000): Promise<Servers> {
  const end = Date.now() + timeout;
  for (;;) {
    const frame = await socket.nextJSON<{ type: string; mcp?: Servers }>(Math.max(1, end - Date.now()));
    if (frame.type === "cf_agent_mcp_servers" && check(frame.mcp as Servers)) return frame.mcp as Servers;
  }
}

/** Records console.error for the rest of the test instead of printing it (the object's own logs share this console). */
function captureErrors(): string[] {
  const lines: string[] = [];
  const spy = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
  onTestFinished(() => spy.mockRestore());
  return lines;
}


describe("assistant", () => {
  it("adds the counter's MCP server, sends the list on connect and after each change, and calls a tool", async () => {
    const name = fresh("assistant");
    const counter = fresh("counter");
    const { socket, mcp } = await connect(name);
    expect(mcp).toEqual({ servers: {}, tools: [], prompts: [], resources: [] });
    const watcher = await openSocket(worker, `${ORIGIN}/agents/mcp-counter/${counter}`);
    await watcher.frames(2); // identity, state

    const added = (await socket.rpc("addServer", [counterUrl(counter), "counter"], 10_000)) as AddedServer;
    expect(added).toEqual({ id: expect.stringMatching(/^[0-9a-f]{16}$/), state: "ready" });
    const connecting = await mcpFrame(socket, (m) => m.servers[added.id]?.state === "connecting");
    expect(connecting.servers[added.id]).toEqual({
      name: "counter",
      server_url: counterUrl(counter),
      auth_url: null,
      state: "connecting",
      error: null,
      instructions: null,
      capabilities: null,
    });
    const ready = await mcpFrame(socket, (m) => m.servers[added.id]?.state === "ready");
    expect(ready.tools.map((tool) => `${tool.serverId === added.id}:${tool.name}`).sort()).toEqual(["true:get_count", "true:increment"]);

    // The tool runs in the counter object: its watchers see the change.
    expect(textOf(await socket.rpc("callTool", [added.id, "increment", { by: 3 }], 10_000))).toBe("The count is now 3.");
    expect((await watcher.nextJSON<CounterFrame>()).state.count).toBe(3);

    // A new tab gets the current list in its connect sequence.
    const late = await connect(name);
    expect(late.mcp.servers[added.id]?.state).toBe("ready");
    expect(late.mcp.tools.map((tool) => tool.name).sort()).toEqual(["get_count", "increment"]);

    // Adding the same URL again keeps one server.
    expect(await socket.rpc("addServer", [counterUrl(counter), "another name"], 10_000)).toEqual(added);
    expect(await socket.rpc("removeServer", [added.id])).toBe(true);
    await mcpFrame(socket, (m) => Object.keys(m.servers).length === 0 && m.tools.length === 0);
    await mcpFrame(late.socket, (m) => Object.keys(m.servers).length === 0);
    for (const s of [socket, late.socket, watcher]) await s.close();
  });

  it("keeps its servers across eviction: the list arrives on connect, then a tool call works", async () => {
    const name = fresh("evicted");
    const counter = fresh("counter");
    const before = await connect(name);
    const added = (await before.socket.rpc("addServer", [counterUrl(counter), "counter"], 10_000)) as AddedServer;
    expect(textOf(await before.socket.rpc("callTool", [added.id, "increment", { by: 2 }], 10_000))).toBe("The count is now 2.");
    await before.socket.close();

    await evictDurableObject(env.Assistant.get(env.Assistant.idFromName(name)));
    // The registry is in SQLite: the server is listed at once, and reconnects on this first use.
    const after = await connect(name);
    expect(after.mcp.servers[added.id]).toMatchObject({ name: "counter", server_url: counterUrl(counter) });
    const ready = after.mcp.servers[added.id]?.state === "ready" ? after.mcp : await mcpFrame(after.socket, (m) => m.servers[added.id]?.state === "ready");
    expect(ready.tools.map((tool) => tool.name).sort()).toEqual(["get_count", "increment"]);
    expect(textOf(await after.socket.rpc("callTool", [added.id, "increment", {}], 10_000))).toBe("The count is now 3.");
    await after.socket.close();
  });

  it("a tool call right after eviction connects first", async () => {
    const name = fresh("lazy");
    const counter = fresh("counter");
    const before = await connect(name);
    const added = (await before.socket.rpc("addServer", [counterUrl(counter), "counter"], 10_000)) as AddedServer;
    await before.socket.close();
    await evictDurableObject(env.Assistant.get(env.Assistant.idFromName(name)));

    const after = await connect(name);
    expect(textOf(await after.socket.rpc("callTool", [added.id, "get_count", {}], 10_000))).toBe("The count is 0.");
    await after.socket.close();
  });

  it("shows the caller why a server cannot be added or called, and keeps working", async () => {
    const name = fresh("refused");
    const logged = captureErrors();
    // Not a loopback host: outside local development the default policy wants https to a public host.
    const remote = await connect(name, "http://example.com");
    const refusal = await remote.socket.rpc("addServer", ["http://example.com/agents/mcp-counter/x/mcp"]).catch((error: Error) => error.message);
    expect(refusal).toBe("dokit: McpClients.add: http://example.com is not allowed: only https URLs are allowed outside local development");
    await expect(remote.socket.rpc("addServer", ["https://10.0.0.1/mcp"])).rejects.toThrow(/private and loopback addresses are not allowed/);
    await expect(remote.socket.rpc("addServer", ["not a url"])).rejects.toThrow(/^Invalid argument url of addServer/);
    await expect(remote.socket.rpc("callTool", ["nope", "increment", {}])).rejects.toThrow(/no MCP server with the id "nope"/);
    // The bad tool argument is the server's answer: a tool error, not a crash.
    const local = await connect(name);
    const added = (await local.socket.rpc("addServer", [counterUrl(fresh("counter")), "counter"], 10_000)) as AddedServer;
    const bad = (await local.socket.rpc("callTool", [added.id, "increment", { by: 1000 }], 10_000)) as ToolResult;
    expect(bad.isError).toBe(true);
    expect(textOf(await local.socket.rpc("callTool", [added.id, "get_count", {}], 10_000))).toBe("The count is 0.");
    // The refused connection is still open and sees the change another tab made.
    await mcpFrame(remote.socket, (m) => m.servers[added.id]?.state === "ready");
    for (const s of [remote.socket, local.socket]) await s.close();
    // The object logs each refusal with its stack; the client got only the message.
    expect(logged).toEqual([
      expect.stringContaining("callable addServer threw DokitError: dokit: McpClients.add: http://example.com is not allowed"),
      expect.stringContaining("callable addServer threw DokitError: dokit: McpClients.add: https://10.0.0.1 is not allowed"),
      expect.stringContaining('callable callTool threw DokitError: dokit: no MCP server with the id "nope"'),
    ]);
  });
});
