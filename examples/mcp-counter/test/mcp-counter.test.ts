import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { exports } from "cloudflare:workers";
import { openSocket, type TestSocket } from "dokit/testing";
import { describe, expect, it } from "vitest";
import { fresh, textOf } from "../../test-helpers";
import type { CounterState } from "../src/api";

// The Worker's own fetch (typed by GlobalProps in env.d.ts): requests go through its routing.
const worker = exports.default;
type StateFrame = { type: "cf_agent_state"; state: CounterState };

/** The official MCP client, talking to the example Worker. */
async function mcpClient(name: string): Promise<Client> {
  const client = new Client({ name: "example-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`http://example.com/agents/mcp-counter/${name}/mcp`), {
    // No standalone GET stream: this test needs no server-initiated messages, and an open stream pins the object.
    fetch: (url, init) => (init?.method === "GET" ? Promise.resolve(new Response(null, { status: 405 })) : worker.fetch(String(url), init)),
  });
  await client.connect(transport);
  return client;
}

async function watch(name: string): Promise<{ socket: TestSocket; state: CounterState }> {
  const socket = await openSocket(worker, `http://example.com/agents/mcp-counter/${name}`);
  expect(await socket.nextJSON()).toEqual({ type: "cf_agent_identity", name, agent: "mcp-counter", stateFollows: true });
  return { socket, state: (await socket.nextJSON<StateFrame>()).state };
}


describe("mcp-counter", () => {
  it("lists its tools to an MCP client", async () => {
    const client = await mcpClient(fresh("tools"));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(["get_count", "increment"]);
    await client.close();
  });

  it("an MCP tool call changes the count that WebSocket clients watch live", async () => {
    const name = fresh("live");
    const watcher = await watch(name);
    expect(watcher.state).toEqual({ count: 0, last: null });
    const client = await mcpClient(name);

    expect(textOf(await client.callTool({ name: "increment", arguments: { by: 5 } }))).toBe("The count is now 5.");
    expect((await watcher.socket.nextJSON<StateFrame>()).state).toMatchObject({ count: 5, last: { by: 5 } });
    expect(textOf(await client.callTool({ name: "increment", arguments: {} }))).toBe("The count is now 6.");
    expect((await watcher.socket.nextJSON<StateFrame>()).state.count).toBe(6);
    expect(textOf(await client.callTool({ name: "get_count", arguments: {} }))).toBe("The count is 6.");
    const { contents } = await client.readResource({ uri: "counter://count" });
    expect(contents).toEqual([{ uri: "counter://count", text: "6" }]);
    await client.close();
    await watcher.socket.close();
  });

  it("refuses a bad argument without changing the count, and watchers cannot write", async () => {
    const name = fresh("bad");
    const watcher = await watch(name);
    const client = await mcpClient(name);
    const result = await client.callTool({ name: "increment", arguments: { by: 1000 } });
    expect(result.isError).toBe(true);
    watcher.socket.send({ type: "cf_agent_state", state: { count: 99, last: null } });
    expect(await watcher.socket.nextJSON()).toEqual({ type: "cf_agent_state_error", error: "Connection is readonly" });
    expect(textOf(await client.callTool({ name: "get_count", arguments: {} }))).toBe("The count is 0.");
    await client.close();
    await watcher.socket.close();
  });
});
