// dokit's client against hostile input, over real loopback: malformed frames sent
// to dokit's AgentClient by a malicious server running here in Node.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { WebSocketServer } from "ws";
import { AgentClient } from "../src/client";
import { eventually } from "./helpers";

/** Protocol frames with a field of the wrong type, each with the problem the client reports. */
const MALFORMED: [frame: unknown, type: string, problem: string][] = [
  [{ type: "cf_agent_identity", name: { toString: null }, agent: "fake" }, "cf_agent_identity", "name is not a string"],
  [{ type: "cf_agent_identity", name: "room", agent: { toString: null } }, "cf_agent_identity", "agent is not a string"],
  [{ type: "cf_agent_identity", name: "room", agent: "fake", stateFollows: "yes" }, "cf_agent_identity", "stateFollows is not a boolean"],
  [{ type: "cf_agent_state" }, "cf_agent_state", "state is missing"],
  [{ type: "cf_agent_state_error", error: { toString: null } }, "cf_agent_state_error", "error is not a string"],
  [{ type: "cf_agent_state_error", error: { toString: null, valueOf: null } }, "cf_agent_state_error", "error is not a string"],
  [{ type: "cf_agent_mcp_servers", mcp: null }, "cf_agent_mcp_servers", "mcp is not an object"],
  [{ type: "cf_agent_mcp_servers", mcp: { servers: [], tools: [], prompts: [], resources: [] } }, "cf_agent_mcp_servers", "mcp.servers is not an object"],
  [
    { type: "cf_agent_mcp_servers", mcp: { servers: { a: { name: { toString: null }, server_url: "u", state: "ready" } }, tools: [], prompts: [], resources: [] } },
    "cf_agent_mcp_servers",
    'mcp.servers["a"].name is not a string',
  ],
  [{ type: "cf_agent_mcp_servers", mcp: { servers: {}, tools: "all", prompts: [], resources: [] } }, "cf_agent_mcp_servers", "mcp.tools is not an array"],
  [{ type: "cf_agent_mcp_servers", mcp: { servers: {}, tools: [null], prompts: [], resources: [] } }, "cf_agent_mcp_servers", "mcp.tools has an entry without a string name and serverId"],
  [{ type: "rpc", id: { toString: null }, success: true, done: true }, "rpc", "id is not a string"],
  [{ type: "rpc", id: "nobody", success: "yes" }, "rpc", "success is not a boolean"],
];

/** What the fake server answers to each method the client calls. */
const ANSWERS: Record<string, (id: string) => unknown> = {
  badError: (id) => ({ type: "rpc", id, success: false, error: { toString: null } }),
  badDone: (id) => ({ type: "rpc", id, success: true, done: "yes", result: 1 }),
  fine: (id) => ({ type: "rpc", id, success: true, done: true, result: 42 }),
};

/**
 * A WebSocket server on 127.0.0.1 that greets every client with each malformed frame, then a
 * valid identity and state, and answers calls from ANSWERS.
 * @returns its `host:port`
 */
async function maliciousServer(): Promise<string> {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.on("connection", (socket) => {
    for (const [frame] of MALFORMED) socket.send(JSON.stringify(frame));
    socket.send(JSON.stringify({ type: "cf_agent_identity", name: "room", agent: "fake", stateFollows: true }));
    socket.send(JSON.stringify({ type: "cf_agent_state", state: { count: 1 } }));
    socket.on("message", (data) => {
      const request = JSON.parse(String(data)) as { type: string; id: string; method: string };
      const answer = request.type === "rpc" ? ANSWERS[request.method] : undefined;
      if (answer) socket.send(JSON.stringify(answer(request.id)));
    });
  });
  await once(server, "listening");
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The calls every run makes, and what each must end with. */
async function callEach(client: Pick<AgentClient, "call">): Promise<Record<string, string>> {
  const outcome = (promise: Promise<unknown>) => promise.then((value) => `ok ${String(value)}`, (error: Error) => `error ${error.message}`);
  const streamed = new Promise<string>((resolve) => {
    void client.call("badDone", [], { stream: { onDone: () => resolve("done"), onError: (error) => resolve(`error ${error}`) } }).catch(() => {});
  });
  return {
    badError: await outcome(client.call("badError")),
    badDone: await streamed,
    fine: await outcome(client.call("fine")),
  };
}

const EXPECTED_CALLS = {
  badError: "error Malformed rpc frame from the server: error is not a string",
  badDone: "error Malformed rpc frame from the server: done is not a boolean",
  fine: "ok 42",
};
const EXPECTED_REPORTS = [...MALFORMED.map(([, type, problem]) => `${type}: ${problem}`), "rpc: done is not a boolean", "rpc: error is not a string"];

describe("dokit's client against a malicious server", () => {
  it("ignores and reports every malformed frame through onFrameError, and keeps working", async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.prependListener("uncaughtException", onUncaught);
    onTestFinished(() => void process.removeListener("uncaughtException", onUncaught));
    const host = await maliciousServer();
    const reports: string[] = [];
    const stateErrors: string[] = [];
    const client = new AgentClient<unknown, { count: number }>({
      agent: "fake",
      name: "room",
      host,
      onFrameError: (error) => reports.push(`${error.frameType}: ${error.problem}`),
      onStateUpdateError: (error) => stateErrors.push(error),
    });
    onTestFinished(() => client.close());
    await client.ready;
    expect({ name: client.name, agent: client.agent, state: client.state, mcp: client.mcp }).toEqual({ name: "room", agent: "fake", state: { count: 1 }, mcp: undefined });
    expect(await callEach(client)).toEqual(EXPECTED_CALLS);
    expect(reports).toEqual(EXPECTED_REPORTS);
    expect(reports.every((line) => !line.includes("[object"))).toBe(true);
    expect(stateErrors).toEqual([]);
    expect(uncaught).toEqual([]);
  });

  it("warns on the console when there is no onFrameError", async () => {
    const host = await maliciousServer();
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    onTestFinished(() => warn.mockRestore());
    const client = new AgentClient({ agent: "fake", name: "room", host });
    onTestFinished(() => client.close());
    await client.ready;
    await eventually(() => expect(warn).toHaveBeenCalledTimes(MALFORMED.length), { timeout: 10_000, interval: 50 });
    expect(warn.mock.calls[0]).toEqual(["dokit: ignored a malformed cf_agent_identity frame from the server: name is not a string"]);
  });

  it("does not end a Node process that runs the client (exit code 0, every frame reported)", async () => {
    const host = await maliciousServer();
    // The client's source, bundled for a plain Node process.
    const dir = await mkdtemp(join(tmpdir(), "dokit-client-"));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await build({ entryPoints: [new URL("../src/client/index.ts", import.meta.url).pathname], bundle: true, format: "esm", platform: "neutral", outfile: join(dir, "client.mjs"), logLevel: "silent" });
    await writeFile(
      join(dir, "run.mjs"),
      `import { AgentClient } from "./client.mjs";
      const reports = [];
      const client = new AgentClient({ agent: "fake", name: "room", host: process.argv[2], onFrameError: (e) => reports.push(e.frameType + ": " + e.problem) });
      await client.ready;
      const outcome = (p) => p.then((v) => "ok " + v, (e) => "error " + e.message);
      const badDone = await new Promise((resolve) => void client.call("badDone", [], { stream: { onDone: () => resolve("done"), onError: (e) => resolve("error " + e) } }).catch(() => {}));
      const calls = { badError: await outcome(client.call("badError")), badDone, fine: await outcome(client.call("fine")) };
      client.close();
      console.log(JSON.stringify({ name: client.name, state: client.state, calls, reports }));`,
    );
    const child = spawn(process.execPath, [join(dir, "run.mjs"), host], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const [code] = (await once(child, "exit")) as [number | null];
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(stdout)).toEqual({ name: "room", state: { count: 1 }, calls: EXPECTED_CALLS, reports: EXPECTED_REPORTS });
  });
});
