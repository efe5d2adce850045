// A client never hangs: `ready` settles when the connection ends (a refusal,
// `close()`, `readyTimeout`), a host with nothing listening is reported (a
// warning by default, `onConnectFailure` for an app), and `readyTimeout` gives
// up. Over loopback: dokit's client against the scenario worker, a port
// nothing listens on, and a plain Node process running the bundled client with
// a top-level `await client.ready`, the way the README's client.ts does.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { describe, expect, inject, it, onTestFinished, vi } from "vitest";
import { WebSocketServer } from "ws";
import { AgentClient } from "../src/client";
import { eventually, fresh } from "./helpers";

const base = new URL(inject("workerUrl"));
const NO_SOCKETS = /^dokit: this object has no WebSockets/;

/** @returns a loopback port nothing listens on (it was free a moment ago) */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** @returns what `promise` settled with within `ms`, or "pending" */
function outcome(promise: Promise<unknown>, ms = 5000): Promise<string> {
  return Promise.race([
    promise.then(
      () => "resolved",
      (error: Error) => `rejected: ${error.message}`,
    ),
    new Promise<string>((resolve) => setTimeout(() => resolve("pending"), ms)),
  ]);
}

/** A client that is closed when the test finishes. */
function client(options: ConstructorParameters<typeof AgentClient>[0]): AgentClient {
  const made = new AgentClient({ minReconnectionDelay: 50, maxReconnectionDelay: 100, ...options });
  onTestFinished(() => made.close());
  return made;
}

describe("ready", () => {
  it("rejects with the refusal when the server refuses the connection", async () => {
    const errors: Error[] = [];
    const refused = client({ host: base.host, agent: "RefusalNoSockets", name: fresh("refused"), onConnectionError: (error) => errors.push(error) });
    const ready = refused.ready;
    expect((await outcome(ready)).replace(/^rejected: /, "")).toMatch(NO_SOCKETS);
    await expect(ready).rejects.toBe(errors[0]);
    expect((await outcome(refused.ready)).replace(/^rejected: /, "")).toMatch(NO_SOCKETS);
  });

  it("rejects with Connection closed on close() before it resolved", async () => {
    const closed = client({ host: `127.0.0.1:${await closedPort()}`, agent: "DokitAgent", onConnectFailure: () => {} });
    const ready = closed.ready;
    closed.close();
    expect(await outcome(ready, 1000)).toBe("rejected: Connection closed");
    expect(await outcome(closed.ready, 1000)).toBe("rejected: Connection closed");
  });

  it("resolves, then a close() renews it rejected; reconnect() gives one that resolves", async () => {
    const agent = client({ host: base.host, agent: "DokitAgent", name: fresh("renew") });
    expect(await outcome(agent.ready)).toBe("resolved");
    agent.close();
    expect(await outcome(agent.ready, 1000)).toBe("rejected: Connection closed");
    agent.reconnect();
    expect(await outcome(agent.ready)).toBe("resolved");
  });

  it("resolves for the caller who read it before the first attempts failed, once a server answers", async () => {
    const port = await closedPort();
    const failures: number[] = [];
    const late = client({ host: `127.0.0.1:${port}`, agent: "fake", name: "room", onConnectFailure: (_error, retry) => failures.push(retry.attempt) });
    const ready = late.ready;
    await eventually(() => expect(failures.length).toBeGreaterThanOrEqual(2));
    const server = new WebSocketServer({ host: "127.0.0.1", port });
    onTestFinished(() => {
      for (const socket of server.clients) socket.terminate();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });
    server.on("connection", (socket) => socket.send(JSON.stringify({ type: "cf_agent_identity", name: "room", agent: "fake" })));
    expect(await outcome(ready)).toBe("resolved");
  });

  it("rejecting is never an unhandled rejection when nobody reads it", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    onTestFinished(() => void process.removeListener("unhandledRejection", onUnhandled));
    const errors: Error[] = [];
    client({ host: base.host, agent: "RefusalNoSockets", name: fresh("unread"), onConnectionError: (error) => errors.push(error) });
    client({ host: base.host, agent: "DokitAgent", name: fresh("unread") }).close();
    await eventually(() => expect(errors).toHaveLength(1));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(unhandled).toEqual([]);
  });
});

describe("a host with nothing listening", () => {
  it("is reported to onConnectFailure on every attempt, naming the URL without its query", async () => {
    const port = await closedPort();
    const failures: Array<{ message: string; code: number; attempt: number; delayMs: number }> = [];
    client({
      host: `127.0.0.1:${port}`,
      agent: "Counter",
      name: "main",
      query: { token: "secret" },
      onConnectFailure: (error, retry) => failures.push({ message: error.message, code: error.code, ...retry }),
    });
    await eventually(() => expect(failures.length).toBeGreaterThanOrEqual(3));
    expect(failures[0]).toMatchObject({ code: 1006, attempt: 1 });
    expect(failures[0]!.message).toBe(
      `dokit: could not connect to ws://127.0.0.1:${port}/agents/counter/main (no WebSocket opened: nothing listening there, or the upgrade was refused)`,
    );
    expect(failures.map((failure) => failure.attempt).slice(0, 3)).toEqual([1, 2, 3]);
    expect(failures.every((failure) => failure.delayMs > 0 && !failure.message.includes("secret"))).toBe(true);
  });

  it("prints one console warning per run of failed attempts by default", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    onTestFinished(() => warn.mockRestore());
    const port = await closedPort();
    const closes: number[] = [];
    const nobody = client({ host: `127.0.0.1:${port}`, agent: "Counter", name: "main" });
    nobody.addEventListener("close", () => closes.push(Date.now()));
    await eventually(() => expect(closes.length).toBeGreaterThanOrEqual(3));
    expect(warn.mock.calls).toEqual([
      [
        `dokit: could not connect to ws://127.0.0.1:${port}/agents/counter/main (no WebSocket opened: nothing listening there, or the upgrade was refused); retrying with backoff until it connects (onConnectFailure reports every attempt; readyTimeout or maxRetries give up)`,
      ],
    ]);
  });

  it("ends with readyTimeout: onConnectionError and ready reject with the last failure, no further attempt", async () => {
    const port = await closedPort();
    const errors: Error[] = [];
    let failures = 0;
    const started = Date.now();
    const timed = client({
      host: `127.0.0.1:${port}`,
      agent: "Counter",
      name: "main",
      readyTimeout: 600,
      onConnectFailure: () => failures++,
      onConnectionError: (error) => errors.push(error),
    });
    const expected = `dokit: not connected within 600 ms: could not connect to ws://127.0.0.1:${port}/agents/counter/main (no WebSocket opened: nothing listening there, or the upgrade was refused)`;
    expect(await outcome(timed.ready, 5000)).toBe(`rejected: ${expected}`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
    expect(errors.map((error) => error.message)).toEqual([expected]);
    expect(timed.connectionError).toBe(errors[0]);
    const after = failures;
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(failures).toBe(after);
    await expect(timed.call("anything")).rejects.toThrow("Connection closed");
  });

  it("readyTimeout does not end a connection that is identified in time", async () => {
    const errors: Error[] = [];
    const quick = client({ host: base.host, agent: "DokitAgent", name: fresh("in-time"), readyTimeout: 1500, onConnectionError: (error) => errors.push(error) });
    expect(await outcome(quick.ready)).toBe("resolved");
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(errors).toEqual([]);
    expect(quick.readyState).toBe(quick.OPEN);
  });
});

describe("a Node process with a top-level await client.ready", () => {
  /** Runs `script` (ESM importing ./client.mjs, the bundled client) in a plain Node process. */
  async function runNode(script: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const dir = await mkdtemp(join(tmpdir(), "dokit-client-"));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await build({ entryPoints: [new URL("../src/client/index.ts", import.meta.url).pathname], bundle: true, format: "esm", platform: "neutral", outfile: join(dir, "client.mjs"), logLevel: "silent" });
    await writeFile(join(dir, "run.mjs"), script);
    const child = spawn(process.execPath, [join(dir, "run.mjs"), ...args], { stdio: ["ignore", "pipe", "pipe"] });
    onTestFinished(() => void (child.exitCode === null && child.kill("SIGKILL")));
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const [code] = (await once(child, "exit")) as [number | null];
    return { code, stdout, stderr };
  }

  it("ends with the refusal instead of an unsettled top-level await", async () => {
    const ran = await runNode(
      `import { AgentClient } from "./client.mjs";
      const client = new AgentClient({ agent: "RefusalNoSockets", name: "node", host: process.argv[2], onConnectionError: () => {} });
      try { await client.ready; console.log("ready"); } catch (error) { console.log("rejected: " + error.message); }`,
      base.host,
    );
    expect(ran.code).toBe(0);
    expect(ran.stderr).toBe("");
    expect(ran.stdout.replace(/^rejected: /, "")).toMatch(NO_SOCKETS);
  });

  it("exits after close() before ready, and after readyTimeout against a closed port", async () => {
    const ran = await runNode(
      `import { AgentClient } from "./client.mjs";
      const closed = new AgentClient({ agent: "Counter", host: process.argv[2], onConnectFailure: () => {} });
      setTimeout(() => closed.close(), 50);
      await closed.ready.catch((error) => console.log("closed: " + error.message));
      const timed = new AgentClient({ agent: "Counter", host: process.argv[2], readyTimeout: 300 });
      await timed.ready.catch((error) => console.log("timed out: " + error.code));`,
      `127.0.0.1:${await closedPort()}`,
    );
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe("closed: Connection closed\ntimed out: 1006\n");
    // The second client has no onConnectFailure: the default warning says what happened, once.
    expect(ran.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^dokit: could not connect to ws:\/\/127\.0\.0\.1:\d+\/agents\/counter\/default \(/)]);
  });
});
