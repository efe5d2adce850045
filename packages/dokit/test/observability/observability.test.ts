import { env, exports } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, onTestFinished } from "vitest";
import { CHANNELS, type ChannelEventMap, type EventChannelKey, includeValues, type ObservabilityEvent, subscribe } from "../../src/observability";
import { settings } from "../../src/observability/observer";
import { STATE } from "../../src/protocol";
import { connectionAttachment, hibernate, openSocket, type TestSocket, type Upgrader } from "../../src/testing";
import { captureConsole } from "../logs";
import { fresh } from "../helpers";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: Upgrader & { fetch(input: string, init?: RequestInit): Promise<Response> } }).default;
const KEYS = Object.keys(CHANNELS) as EventChannelKey[];

type Recorded = ObservabilityEvent & { channel: EventChannelKey };

/** Subscribes to every channel for the rest of the test. @returns the events of object `name`, as they arrive */
function record(name: string): Recorded[] {
  const events: Recorded[] = [];
  for (const key of KEYS) {
    const stop = subscribe(key, (event: ChannelEventMap[typeof key]) => {
      if (event.name === name) events.push({ ...event, channel: key } as Recorded);
    });
    onTestFinished(stop);
  }
  return events;
}

/** @returns the first event of `type`, waiting for it (events of socket closes arrive after the client's close) */
async function eventOf<T extends Recorded["type"]>(events: Recorded[], type: T, where?: (event: Extract<Recorded, { type: T }>) => boolean): Promise<Extract<Recorded, { type: T }>> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const found = events.find((event): event is Extract<Recorded, { type: T }> => event.type === type && (!where || where(event as Extract<Recorded, { type: T }>)));
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no ${type} event; got ${events.map((event) => event.type).join(", ")}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const room = (name: string) => env.OBSERVED_ROOM.get(env.OBSERVED_ROOM.idFromName(name));

async function join(name: string, query: Record<string, string> = {}): Promise<TestSocket> {
  const socket = await openSocket(worker, `http://example.com/agents/observed-room/${name}`, { query });
  await socket.frames(2); // identity, state
  return socket;
}

/** Every event carries the object's class and name and a timestamp. */
function expectBase(event: Recorded, name: string, channel: EventChannelKey): void {
  expect(event).toMatchObject({ agent: "ObservedRoom", name, channel });
  expect(event.timestamp).toBeGreaterThan(Date.now() - 60_000);
  expect(event.timestamp).toBeLessThanOrEqual(Date.now());
}

describe("lifecycle and connection events (agents:lifecycle)", () => {
  it("publishes start, connect and disconnect with the connection id, code, reason and duration", async () => {
    const name = fresh("life");
    const events = record(name);
    const socket = await join(name, { _pk: "conn-1" });
    const start = await eventOf(events, "start");
    expectBase(start, name, "lifecycle");
    expect(start.payload.durationMs).toBeGreaterThanOrEqual(0);
    const connect = await eventOf(events, "connect");
    expectBase(connect, name, "lifecycle");
    expect(connect.payload).toEqual({ connectionId: "conn-1", durationMs: expect.any(Number) });
    await socket.close(4001, "bye now");
    const disconnect = await eventOf(events, "disconnect");
    expect(disconnect.payload).toEqual({ connectionId: "conn-1", code: 4001, reason: "bye now", wasClean: true, durationMs: expect.any(Number) });
    expect(disconnect.payload.durationMs).toBeGreaterThanOrEqual(0);
    expect(events.map((event) => event.type).indexOf("start")).toBeLessThan(events.map((event) => event.type).indexOf("connect"));
  });

  it("keeps the opening time across hibernation, so a disconnect after a wake has its duration", async () => {
    const name = fresh("asleep");
    const events = record(name);
    const socket = await join(name, { _pk: "sleeper" });
    const stub = room(name);
    const at = await runInDurableObject(stub, (_instance, ctx) => (connectionAttachment(ctx.getWebSockets()[0] as WebSocket) as { __dokit: { at?: number } }).__dokit.at);
    expect(at).toBeGreaterThan(Date.now() - 60_000);
    await hibernate(stub);
    await socket.close(1000, "after a wake");
    const disconnect = await eventOf(events, "disconnect");
    expect(disconnect.payload).toMatchObject({ connectionId: "sleeper", code: 1000, reason: "after a wake" });
    expect(disconnect.payload.durationMs).toBeGreaterThanOrEqual(0);
    // The wake published a start of its own (a fresh instance).
    expect(events.filter((event) => event.type === "start").length).toBeGreaterThanOrEqual(2);
  });

  it("publishes nothing, and records no opening time, for an object without Observability", async () => {
    const name = fresh("plain");
    const events = record(name);
    const before = { ...settings };
    const socket = await openSocket(worker, `http://example.com/agents/plain-room/${name}`, { query: { _pk: "p" } });
    await socket.frames(1); // identity
    socket.send("hello");
    expect(await socket.next()).toBe("hello");
    const stub = env.PLAIN_ROOM.get(env.PLAIN_ROOM.idFromName(name));
    const flags = await runInDurableObject(stub, (_instance, ctx) => (connectionAttachment(ctx.getWebSockets()[0] as WebSocket) as { __dokit: Record<string, unknown> }).__dokit);
    expect(flags.at).toBeUndefined();
    await socket.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(events).toEqual([]);
    expect(settings).toEqual(before);
  });

  it("publishes connect:refused with the error's code, and error for a throwing handler", async () => {
    const logs = captureConsole();
    const name = fresh("refused");
    const events = record(name);
    const refused = await openSocket(worker, `http://example.com/agents/observed-room/${name}`, { query: { _pk: "nope", refuse: "1" } });
    expect((await refused.closed).code).toBe(4500);
    const event = await eventOf(events, "connect:refused");
    expect(event.payload).toEqual({ where: "connect", code: "INTERNAL", message: "no tags for you", connectionId: "nope" });

    const socket = await join(name, { _pk: "thrower" });
    socket.send("throw");
    socket.send("after");
    expect(await socket.next()).toBe("echo:after"); // the failure stayed with its message
    const error = await eventOf(events, "error");
    expect(error.payload).toEqual({ where: "message", code: "INTERNAL", message: "handler failed", connectionId: "thrower" });
    await socket.close();
    expect(logs.error.some((line) => line.includes("no tags for you"))).toBe(true);
    expect(logs.error.some((line) => line.includes("handler failed"))).toBe(true);
  });

  it("publishes alarm with its duration and destroy", async () => {
    const name = fresh("alarm");
    const events = record(name);
    const stub = room(name);
    await stub.armAlarm();
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const alarm = await eventOf(events, "alarm");
    // retryCount and isRetry come from the platform's alarm info, when it passes one.
    expect(alarm.payload.durationMs).toBeGreaterThanOrEqual(0);
    await stub.destroy();
    const destroy = await eventOf(events, "destroy");
    expect(destroy.payload).toEqual({});
  });
});

describe("frame events (agents:message)", () => {
  it("names each frame's type, the handler that took it, its size and duration, without its body", async () => {
    const name = fresh("frames");
    const events = record(name);
    const socket = await join(name, { _pk: "framer" });
    socket.send("hello");
    expect(await socket.next()).toBe("echo:hello");
    expect(await socket.rpc("add", [1, 2])).toBe(3);
    const stateFrame = JSON.stringify({ type: STATE, state: { count: 5, secret: "s3cret" } });
    socket.send(stateFrame);
    socket.send(new Uint8Array([1, 2, 3]).buffer);
    expect(await socket.next()).not.toBeTypeOf("string"); // the binary echo
    const dispatched = () => events.filter((event) => event.type === "message:dispatch").map((event) => event.payload);
    await eventOf(events, "message:dispatch", (event) => event.payload.type === "binary");
    expect(dispatched()).toEqual([
      { connectionId: "framer", type: "text", handler: "onMessage", size: 5, durationMs: expect.any(Number) },
      { connectionId: "framer", type: "rpc", handler: "Callables", size: expect.any(Number), durationMs: expect.any(Number) },
      { connectionId: "framer", type: STATE, handler: "State", size: stateFrame.length, durationMs: expect.any(Number) },
      { connectionId: "framer", type: "binary", handler: "onMessage", size: 3, durationMs: expect.any(Number) },
    ]);
    expect(events.find((event) => event.type === "message:dispatch")?.channel).toBe("message");
    await socket.close();
  });

  it("carries the message itself and the state value only after includeValues()", async () => {
    includeValues();
    onTestFinished(() => includeValues(false));
    const name = fresh("values");
    const events = record(name);
    const socket = await join(name);
    socket.send(JSON.stringify({ type: STATE, state: { count: 9, secret: "s3cret" } }));
    const update = await eventOf(events, "state:update");
    expect(update.payload).toMatchObject({ state: { count: 9, secret: "s3cret" } });
    const frame = await eventOf(events, "message:dispatch");
    expect(frame.payload.body).toContain('"count":9');
    await socket.close();
  });
});

describe("rpc events (agents:rpc)", () => {
  it("publishes rpc for each call (ok, duration, streamed chunks) and rpc:error with the code", async () => {
    const logs = captureConsole();
    const name = fresh("rpc");
    const events = record(name);
    const socket = await join(name, { _pk: "caller" });
    expect(await socket.rpc("add", [2, 3])).toBe(5);
    await expect(socket.rpc("refuse")).rejects.toThrow("not for you");
    await expect(socket.rpc("missing")).rejects.toThrow("Method missing does not exist");
    const chunks = await socket.stream("count");
    expect(chunks).toMatchObject({ chunks: [1, 2, 3] });
    await eventOf(events, "rpc", (event) => event.payload.method === "count");
    const rpc = events.filter((event) => event.type === "rpc").map((event) => event.payload);
    expect(rpc).toEqual([
      { connectionId: "caller", method: "add", ok: true, durationMs: expect.any(Number) },
      { connectionId: "caller", method: "refuse", ok: false, durationMs: expect.any(Number) },
      { connectionId: "caller", method: "missing", ok: false, durationMs: expect.any(Number) },
      { connectionId: "caller", method: "count", ok: true, durationMs: expect.any(Number), streaming: true, chunks: 3 },
    ]);
    const errors = events.filter((event) => event.type === "rpc:error").map((event) => event.payload);
    expect(errors).toEqual([
      { connectionId: "caller", method: "refuse", ok: false, durationMs: expect.any(Number), error: "not for you", code: "REFUSED" },
      { connectionId: "caller", method: "missing", ok: false, durationMs: expect.any(Number), error: "Method missing does not exist", code: "METHOD_NOT_FOUND" },
    ]);
    expect(events.filter((event) => event.channel === "rpc")).toHaveLength(6);
    expect(logs.info).toEqual(["dokit: callable refuse refused: not for you"]);
    await socket.close();
  });

  it("reaches a subscriber written against node:diagnostics_channel directly (as for the reference)", async () => {
    const name = fresh("raw");
    const seen: unknown[] = [];
    // SAFETY: the runtime's node:diagnostics_channel (nodejs_compat).
    const dc = (globalThis as unknown as { process: { getBuiltinModule(id: string): { subscribe(n: string, f: (m: unknown) => void): void; unsubscribe(n: string, f: (m: unknown) => void): void } } }).process.getBuiltinModule("node:diagnostics_channel");
    const listener = (message: unknown) => {
      if ((message as { name?: string }).name === name) seen.push(message);
    };
    dc.subscribe("agents:rpc", listener);
    onTestFinished(() => dc.unsubscribe("agents:rpc", listener));
    const socket = await join(name);
    expect(await socket.rpc("add", [1, 1])).toBe(2);
    expect(seen).toEqual([expect.objectContaining({ type: "rpc", agent: "ObservedRoom", name, payload: expect.objectContaining({ method: "add" }) })]);
    await socket.close();
  });
});

describe("state events (agents:state)", () => {
  it("publishes state:update with its source and size, and state:reject with the code, never the value", async () => {
    const logs = captureConsole();
    const name = fresh("state");
    const events = record(name);
    const writer = await join(name, { _pk: "writer" });
    const viewer = await join(name, { _pk: "viewer", mode: "view" });
    const next = { count: 1, secret: "s3cret" };
    writer.send(JSON.stringify({ type: STATE, state: next }));
    const update = await eventOf(events, "state:update");
    expectBase(update, name, "state");
    expect(update.payload).toEqual({ source: "client", connectionId: "writer", size: JSON.stringify(next).length });
    expect(await room(name).bump()).toBe(2);
    expect(events.filter((event) => event.type === "state:update")[1]?.payload).toEqual({ source: "server", size: JSON.stringify({ count: 2, secret: "s3cret" }).length });

    viewer.send(JSON.stringify({ type: STATE, state: { count: 7, secret: "x" } }));
    const readonly = await eventOf(events, "state:reject");
    expect(readonly.payload).toEqual({ source: "client", connectionId: "viewer", code: "READONLY", size: 24 });
    writer.send(JSON.stringify({ type: STATE, state: { count: -1, secret: "x" } }));
    const invalid = await eventOf(events, "state:reject", (event) => event.payload.code !== "READONLY");
    expect(invalid.payload).toEqual({ source: "client", connectionId: "writer", code: "INVALID_STATE", size: 25 });
    expect(JSON.stringify(events)).not.toContain("s3cret");
    expect(logs.warn.some((line) => line.includes("refused a state change"))).toBe(true);
    await writer.close();
    await viewer.close();
  });
});

describe("scheduler and queue events (agents:schedule)", () => {
  it("publishes create, execute, retry, error and cancel with callback, id, attempts and duration", async () => {
    const name = fresh("jobs");
    const events = record(name);
    const stub = env.OBSERVED_JOBS.get(env.OBSERVED_JOBS.idFromName(name));
    const ok = await stub.scheduleOk();
    const boom = await stub.scheduleBoom();
    const cancelled = await stub.scheduleAndCancel();
    const flaky = await stub.pushFlaky();
    for (let i = 0; i < 6 && !events.some((event) => event.type === "schedule:error"); i++) {
      await runDurableObjectAlarm(stub);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await runDurableObjectAlarm(stub);
    const of = (type: string, id: string) => events.find((event) => event.type === type && (event.payload as { id: string }).id === id)?.payload;
    expect(of("schedule:create", ok)).toEqual({ callback: "ok", id: ok });
    expect(of("schedule:execute", ok)).toEqual({ callback: "ok", id: ok, attempt: 1, durationMs: expect.any(Number) });
    expect(of("schedule:retry", boom)).toEqual({ callback: "boom", id: boom, attempt: 1, maxAttempts: 2, error: "boom", durationMs: expect.any(Number) });
    expect(of("schedule:error", boom)).toEqual({ callback: "boom", id: boom, attempts: 2, error: "boom", durationMs: expect.any(Number) });
    expect(of("schedule:cancel", cancelled)).toEqual({ id: cancelled });
    expect(of("queue:create", flaky)).toEqual({ callback: "flaky", id: flaky });
    expect(of("queue:retry", flaky)).toMatchObject({ callback: "flaky", attempt: 1, maxAttempts: 3, error: "first try fails" });
    expect(of("queue:execute", flaky)).toMatchObject({ callback: "flaky", attempt: 2 });
    expect(events.every((event) => event.channel === "schedule" || event.channel === "lifecycle")).toBe(true);
    expect(events.find((event) => event.type === "schedule:create")?.agent).toBe("ObservedJobs");
  });
});

describe("MCP events (agents:mcp)", () => {
  it("publishes mcp:request with era, method, tool, status, duration and session", async () => {
    const name = fresh("mcp");
    const events = record(name);
    const url = `http://example.com/agents/observed-mcp/${name}/mcp`;
    const headers = { accept: "application/json, text/event-stream", "content-type": "application/json" };
    const init = await worker.fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
    });
    expect(init.status).toBe(200);
    const session = init.headers.get("mcp-session-id") as string;
    expect(session).toBeTruthy();
    await init.text();
    const sessionHeaders = { ...headers, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    const initialized = await worker.fetch(url, { method: "POST", headers: sessionHeaders, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) });
    await initialized.text();
    const call = await worker.fetch(url, {
      method: "POST",
      headers: sessionHeaders,
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "add", arguments: { a: 2, b: 3 } } }),
    });
    expect(await call.text()).toContain('"text":"5"');
    const requests = events.filter((event) => event.type === "mcp:request").map((event) => event.payload);
    expect(requests[0]).toEqual({ era: "legacy", method: "initialize", messages: 1, status: 200, durationMs: expect.any(Number), sessionId: session });
    expect(requests[2]).toEqual({ era: "legacy", method: "tools/call", tool: "add", messages: 1, status: 200, durationMs: expect.any(Number), sessionId: session });
    expect(events.find((event) => event.type === "mcp:request")?.channel).toBe("mcp");
  });
});

describe("zero cost without subscribers", () => {
  it("builds no event and reads no clock for events while nobody listens, with Observability installed", async () => {
    const logs = captureConsole();
    const before = { built: settings.built, clock: settings.clock };
    const name = fresh("quiet");
    const socket = await join(name, { _pk: "quiet" });
    socket.send("hello");
    expect(await socket.next()).toBe("echo:hello");
    expect(await socket.rpc("add", [1, 2])).toBe(3);
    expect(await socket.stream("count")).toMatchObject({ chunks: [1, 2, 3] });
    await expect(socket.rpc("refuse")).rejects.toThrow();
    socket.send(JSON.stringify({ type: STATE, state: { count: 3, secret: "x" } }));
    socket.send("throw");
    socket.send("ping");
    expect(await socket.next()).toBe("echo:ping"); // every frame before it was handled
    expect(await room(name).bump()).toBe(4);
    await socket.close(1000, "done");
    const jobs = env.OBSERVED_JOBS.get(env.OBSERVED_JOBS.idFromName(name));
    await jobs.scheduleOk();
    await jobs.pushFlaky();
    await runDurableObjectAlarm(jobs);
    const mcp = await worker.fetch(`http://example.com/agents/observed-mcp/${name}/mcp`, {
      method: "POST",
      headers: { accept: "application/json, text/event-stream", "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
    });
    await mcp.text();
    await new Promise((resolve) => setTimeout(resolve, 50)); // the close reaches the object
    expect(settings).toMatchObject(before);
    expect(logs.error.some((line) => line.includes("handler failed"))).toBe(true);

    // The counters do count: one listener, one message, events built and timed.
    const events = record(name);
    const again = await join(name, { _pk: "loud" });
    again.send("hello");
    expect(await again.next()).toBe("echo:hello");
    await eventOf(events, "message:dispatch");
    expect(settings.built).toBeGreaterThan(before.built);
    expect(settings.clock).toBeGreaterThan(before.clock);
    await again.close();
  });

  it("a subscriber that throws is logged and never breaks the work that published", async () => {
    const logs = captureConsole();
    const name = fresh("throwing");
    onTestFinished(
      subscribe("rpc", (event) => {
        if (event.name === name) throw new Error("subscriber bug");
      }),
    );
    const socket = await join(name);
    expect(await socket.rpc("add", [4, 4])).toBe(8);
    expect(logs.error.some((line) => line.includes("a subscriber of rpc events threw") && line.includes("subscriber bug"))).toBe(true);
    await socket.close();
  });
});
