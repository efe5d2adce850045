import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { hibernate, openSocket } from "../../src/testing";
import { captureConsole } from "../logs";
import { fresh, sleep, textOf, until } from "../helpers";
import { rawSessions } from "../mcp-raw-session";
import { SseReader } from "../sse-reader";

// ---------------------------------------------------------------- helpers

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: { fetch(input: string, init?: RequestInit): Promise<Response> } }).default;
const endpoint = (binding: string, name: string) => new URL(`http://example.com/agents/${binding}/${name}/mcp`);
const ACCEPT = "application/json, text/event-stream";
const LEGACY_VERSION = "2025-11-25";

/** Every error response any test received, checked for stack traces at the end. */
const errorBodies: { status: number; body: string }[] = [];

/** Calls the test worker (routeAgentRequest → the Durable Object) and records error bodies. */
async function send(input: string | URL, init?: RequestInit): Promise<Response> {
  const response = await worker.fetch(String(input), init);
  if (response.status >= 400) errorBodies.push({ status: response.status, body: await response.clone().text() });
  return response;
}

type Connected = { client: Client; transport: StreamableHTTPClientTransport };

/** Connects the official MCP client through the test worker. */
async function connect(
  target: URL,
  options: {
    modern?: boolean;
    headers?: Record<string, string>;
    elicit?: (request: unknown) => unknown;
    /**
     * Keep the client from opening its standalone GET stream. An open stream pins the object in
     * memory (as documented), and evictDurableObject waits for in-flight requests to drain.
     */
    noStandaloneStream?: boolean;
  } = {},
): Promise<Connected> {
  const client = new Client(
    { name: "dokit-test", version: "1.0.0" },
    {
      capabilities: { elicitation: { form: {}, url: {} } },
      ...(options.modern && { versionNegotiation: { mode: { pin: "2026-07-28" } } }),
    },
  );
  if (options.elicit) {
    const elicit = options.elicit;
    // SAFETY: the test handlers return well-formed ElicitResult objects.
    client.setRequestHandler("elicitation/create", async (request) => elicit(request) as never);
  }
  const transport = new StreamableHTTPClientTransport(target, {
    fetch: (url, init) =>
      options.noStandaloneStream && init?.method === "GET" ? Promise.resolve(new Response(null, { status: 405 })) : send(url, init),
    ...(options.headers && { requestInit: { headers: options.headers } }),
  });
  await client.connect(transport);
  return { client, transport };
}

const { open: rawSession, post: rawPost, get: rawGet } = rawSessions(send);


/** @returns the events table rows of one session, by stream */
async function storedEvents(stub: DurableObjectStub, session: string): Promise<{ stream: string; n: number }[]> {
  return runInDurableObject(stub, (_instance, ctx: DurableObjectState) => {
    const tables = ctx.storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE name = '_dokit_mcp_events'").toArray();
    if (tables.length === 0) return [];
    return ctx.storage.sql
      .exec<{ stream: string; n: number }>("SELECT stream, COUNT(*) AS n FROM _dokit_mcp_events WHERE session = ? GROUP BY stream", session)
      .toArray();
  });
}

/** @returns how many pieces of large events one session stores */
async function storedParts(stub: DurableObjectStub, session: string): Promise<number> {
  return runInDurableObject(stub, (_instance, ctx: DurableObjectState) => {
    const tables = ctx.storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE name = '_dokit_mcp_event_parts'").toArray();
    if (tables.length === 0) return 0;
    return ctx.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM _dokit_mcp_event_parts WHERE session = ?", session).one().n;
  });
}

const counterStub = (name: string) => env.MCP_COUNTER.get(env.MCP_COUNTER.idFromName(name));
const lanes = [
  { lane: "modern (2026-07-28)", modern: true },
  { lane: "legacy (2025 sessions)", modern: false },
] as const;

// ---------------------------------------------------------------- both lanes

describe.each(lanes)("McpHandler, $lane lane", ({ modern }) => {
  it("initializes with the official client", async () => {
    const { client, transport } = await connect(endpoint("mcp-counter", fresh("init")), { modern });
    expect(client.getServerVersion()?.name).toBe("counter");
    if (modern) {
      expect(transport.sessionId).toBeUndefined();
    } else {
      expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(transport.protocolVersion).toBe(LEGACY_VERSION);
    }
    await client.close();
  });

  it("lists tools with their zod schemas as JSON Schema", async () => {
    const { client } = await connect(endpoint("mcp-counter", fresh("list")), { modern });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["add", "get", "whoami", "echo", "check", "confirm", "connect-account"]),
    );
    const add = tools.find((tool) => tool.name === "add");
    expect(add?.inputSchema.properties).toEqual({ a: { type: "number" } });
    await client.close();
  });

  it("refuses arguments that fail the schema, and unknown tools", async () => {
    const { client } = await connect(endpoint("mcp-counter", fresh("schema")), { modern });
    const bad = await client.callTool({ name: "add", arguments: { a: "seven" } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/Input validation error/);
    // A plain JSON Schema, checked by the SDK's cf-worker validator (workerd forbids eval).
    const low = await client.callTool({ name: "check", arguments: { n: 0 } });
    expect(low.isError).toBe(true);
    expect(textOf(await client.callTool({ name: "check", arguments: { n: 2 } }))).toBe("ok 2");
    const unknown = await client.callTool({ name: "no-such-tool", arguments: {} }).then(
      (result) => ({ isError: result.isError, text: textOf(result) }),
      (error: { code?: number; message: string }) => ({ isError: true, text: `${error.code}: ${error.message}` }),
    );
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toMatch(/no-such-tool/);
    // The storage was not touched by the refused call.
    expect(textOf(await client.callTool({ name: "get", arguments: {} }))).toBe("total 0");
    await client.close();
  });

  it("answers an unknown method with -32601", async () => {
    const { client } = await connect(endpoint("mcp-counter", fresh("method")), { modern });
    const error = await client.request({ method: "no/such-method", params: {} }, z.object({})).catch((caught: unknown) => caught);
    if (modern) {
      // The SDK's 2026-07-28 lane answers an unknown method with HTTP 404; the body carries -32601.
      expect(String(error)).toMatch(/-32601/);
      expect(errorBodies.at(-1)?.status).toBe(404);
      expect(JSON.parse(errorBodies.at(-1)!.body)).toMatchObject({ error: { code: -32601 } });
    } else {
      expect(error).toMatchObject({ code: -32601 });
    }
    await client.close();
  });

  it("lets a tool write durable storage that a later call (another client) reads", async () => {
    const name = fresh("durable");
    const first = await connect(endpoint("mcp-counter", name), { modern });
    expect(textOf(await first.client.callTool({ name: "add", arguments: { a: 2 } }))).toBe("total 2");
    expect(textOf(await first.client.callTool({ name: "add", arguments: { a: 3 } }))).toBe("total 5");
    await first.client.close();
    const second = await connect(endpoint("mcp-counter", name), { modern });
    expect(textOf(await second.client.callTool({ name: "get", arguments: {} }))).toBe("total 5");
    await second.client.close();
    const stored = await runInDurableObject(counterStub(name), (_instance, ctx: DurableObjectState) => ctx.storage.get("counter"));
    expect(stored).toBe(5);
  });

  it("gives tools the host, the request and the routed props through getCurrentAgent()", async () => {
    const { client } = await connect(endpoint("mcp-counter", fresh("props")), { modern, headers: { "x-test-user": "alice" } });
    const seen = JSON.parse(textOf(await client.callTool({ name: "whoami", arguments: {} })));
    expect(seen).toEqual({ user: "alice", agentIsHost: true, path: expect.stringMatching(/\/mcp$/) });
    await client.close();
  });

  it("never mixes up two clients' responses on one object", async () => {
    const name = fresh("two");
    const a = await connect(endpoint("mcp-counter", name), { modern, headers: { "x-test-user": "a" } });
    const b = await connect(endpoint("mcp-counter", name), { modern, headers: { "x-test-user": "b" } });
    if (!modern) expect(a.transport.sessionId).not.toBe(b.transport.sessionId);
    const calls = [];
    for (let i = 0; i < 6; i++) {
      // Different delays, so the answers complete in a different order than they were asked.
      calls.push(a.client.callTool({ name: "echo", arguments: { text: `a${i}`, delayMs: (6 - i) * 7 } }).then(textOf));
      calls.push(b.client.callTool({ name: "echo", arguments: { text: `b${i}`, delayMs: i * 7 } }).then(textOf));
    }
    const answers = await Promise.all(calls);
    expect(answers).toEqual([0, 1, 2, 3, 4, 5].flatMap((i) => [`a${i}`, `b${i}`]));
    const [whoA, whoB] = await Promise.all([
      a.client.callTool({ name: "whoami", arguments: {} }).then(textOf),
      b.client.callTool({ name: "whoami", arguments: {} }).then(textOf),
    ]);
    expect(JSON.parse(whoA).user).toBe("a");
    expect(JSON.parse(whoB).user).toBe("b");
    await a.client.close();
    await b.client.close();
  });

  it("keeps working when the object is evicted between calls", async () => {
    const name = fresh("evict");
    const stub = counterStub(name);
    const { client, transport } = await connect(endpoint("mcp-counter", name), { modern, noStandaloneStream: true });
    expect(textOf(await client.callTool({ name: "add", arguments: { a: 4 } }))).toBe("total 4");
    const session = transport.sessionId;
    await evictDurableObject(stub);
    expect(textOf(await client.callTool({ name: "add", arguments: { a: 1 } }))).toBe("total 5");
    await evictDurableObject(stub);
    expect(textOf(await client.callTool({ name: "get", arguments: {} }))).toBe("total 5");
    // The 2025-era client kept its session id throughout: the session was restored, not replaced.
    expect(transport.sessionId).toBe(session);
    await client.close();
  });

  it("answers a factory that throws with an internal error and no detail", async () => {
    const logs = captureConsole();
    const attempt = connect(endpoint("mcp-broken", fresh("broken")), { modern });
    await expect(attempt).rejects.toThrow();
    // The server log names the failure (with its stack); the client never sees it.
    for (const line of logs.error) expect(line).toMatch(/^dokit: mcp: (POST|GET) \S+ failed Error: secret detail/);
    const last = errorBodies.at(-1);
    expect(last?.status).toBe(500);
    expect(last?.body).not.toMatch(/hunter2|secret/);
    expect(JSON.parse(last!.body)).toMatchObject({ jsonrpc: "2.0", error: { code: -32603 } });
  });
});

// ---------------------------------------------------------------- notifications

describe("next to State and WebSockets", () => {
  it("lets a tool change State that WebSocket clients see live, and notifies listeners, across eviction", async () => {
    const name = fresh("state");
    const socket = await openSocket(worker, `http://example.com/agents/mcp-state/${name}`);
    expect(await socket.frames(2)).toEqual([
      { type: "cf_agent_identity", name, agent: "mcp-state-counter", stateFollows: true },
      { type: "cf_agent_state", state: { count: 0 } },
    ]);
    const { client } = await connect(endpoint("mcp-state", name), { modern: true });
    const updates: string[] = [];
    client.setNotificationHandler("notifications/resources/updated", (n) => void updates.push(n.params.uri));
    const subscription = await client.listen({ resourceSubscriptions: ["counter://state"] });
    expect(textOf(await client.callTool({ name: "increment", arguments: { by: 2 } }))).toBe("count 2");
    expect(await socket.nextJSON()).toEqual({ type: "cf_agent_state", state: { count: 2 } });
    await until(() => updates.length >= 1, "resources/updated after the State change");
    expect(updates).toEqual(["counter://state"]);
    await subscription.close();
    await client.close();
    await hibernate(env.MCP_STATE.get(env.MCP_STATE.idFromName(name)));
    const again = await connect(endpoint("mcp-state", name), { modern: true });
    expect(textOf(await again.client.callTool({ name: "increment", arguments: {} }))).toBe("count 3");
    expect(await socket.nextJSON()).toEqual({ type: "cf_agent_state", state: { count: 3 } });
    await again.client.close();
    await socket.close();
  });
});

describe("change notifications", () => {
  it("reach a subscriptions/listen stream (2026-07-28) when the object changes", async () => {
    const name = fresh("listen");
    const { client } = await connect(endpoint("mcp-counter", name), { modern: true });
    const seen: string[] = [];
    client.setNotificationHandler("notifications/resources/updated", (notification) => void seen.push(`updated ${notification.params.uri}`));
    client.setNotificationHandler("notifications/tools/list_changed", () => void seen.push("tools changed"));
    const subscription = await client.listen({ toolsListChanged: true, resourceSubscriptions: ["counter://value"] });
    expect(subscription.honoredFilter).toEqual({ toolsListChanged: true, resourceSubscriptions: ["counter://value"] });
    expect(await counterStub(name).bump(3)).toBe(3);
    await until(() => seen.length >= 2, "listen notifications");
    expect(seen).toEqual(["updated counter://value", "tools changed"]);
    const read = await client.readResource({ uri: "counter://value" });
    expect(read.contents[0]).toMatchObject({ text: "3" });
    await subscription.close();
    await client.close();
  });

  it("reach a 2025-era session's standalone GET stream, resources/updated only when subscribed", async () => {
    const name = fresh("standalone");
    const subscriber = await connect(endpoint("mcp-counter", name));
    const bystander = await connect(endpoint("mcp-counter", name));
    const seen = { subscriber: [] as string[], bystander: [] as string[] };
    for (const [who, connected] of [["subscriber", subscriber], ["bystander", bystander]] as const) {
      connected.client.setNotificationHandler("notifications/tools/list_changed", () => void seen[who].push("tools changed"));
      connected.client.setNotificationHandler("notifications/resources/updated", (n) => void seen[who].push(`updated ${n.params.uri}`));
    }
    await subscriber.client.subscribeResource({ uri: "counter://value" });
    // The client opens its GET stream in the background: bump until it is open.
    const stub = counterStub(name);
    for (let i = 0; i < 50 && !(seen.subscriber.includes("tools changed") && seen.bystander.includes("tools changed")); i++) {
      await stub.bump(1);
      await sleep(20);
    }
    expect(seen.subscriber).toContain("updated counter://value");
    expect(seen.subscriber).toContain("tools changed");
    expect(seen.bystander).toContain("tools changed");
    expect(seen.bystander).not.toContain("updated counter://value");
    await subscriber.client.close();
    await bystander.client.close();
  });
});

// ---------------------------------------------------------------- 2025-era sessions

describe("2025-era sessions", () => {
  it("restore a session after eviction, with the client's capabilities (elicitation still works)", async () => {
    const name = fresh("restore");
    const stub = counterStub(name);
    const asked: string[] = [];
    const { client, transport } = await connect(endpoint("mcp-counter", name), {
      noStandaloneStream: true,
      elicit: (request) => {
        asked.push((request as { params: { message: string } }).params.message);
        return { action: "accept", content: { amount: 7 } };
      },
    });
    const session = transport.sessionId!;
    await evictDurableObject(stub);
    const rows = await runInDurableObject(stub, (_instance, ctx: DurableObjectState) =>
      ctx.storage.sql.exec<{ id: string; init: string }>("SELECT id, init FROM _dokit_mcp_sessions").toArray(),
    );
    expect(rows.map((row) => row.id)).toEqual([session]);
    expect(JSON.parse(rows[0]!.init)).toMatchObject({ protocolVersion: LEGACY_VERSION, capabilities: { elicitation: {} } });
    expect(textOf(await client.callTool({ name: "confirm", arguments: {} }))).toBe("total 7");
    expect(asked).toEqual(["By how much?"]);
    await client.close();
  });

  it("run an elicitation round trip in form and URL mode", async () => {
    const requests: Record<string, unknown>[] = [];
    const { client } = await connect(endpoint("mcp-counter", fresh("elicit")), {
      // The requests travel on the tool call's own POST stream.
      noStandaloneStream: true,
      elicit: (request) => {
        const params = (request as { params: Record<string, unknown> }).params;
        requests.push(params);
        return params.mode === "url" ? { action: "accept" } : { action: "accept", content: { amount: 12 } };
      },
    });
    expect(textOf(await client.callTool({ name: "confirm", arguments: {} }))).toBe("total 12");
    expect(textOf(await client.callTool({ name: "connect-account", arguments: {} }))).toBe("url accept");
    expect(requests[0]).toMatchObject({ message: "By how much?", requestedSchema: { required: ["amount"] } });
    expect(requests[1]).toMatchObject({ mode: "url", elicitationId: "e-1", url: "https://example.com/connect?elicitationId=e-1" });
    await client.close();
  });

  it("answer a declined elicitation without changing anything", async () => {
    const { client } = await connect(endpoint("mcp-counter", fresh("decline")), { elicit: () => ({ action: "decline" }) });
    expect(textOf(await client.callTool({ name: "confirm", arguments: {} }))).toBe("unchanged");
    expect(textOf(await client.callTool({ name: "get", arguments: {} }))).toBe("total 0");
    await client.close();
  });

  it("end on DELETE: the session, its row and its events are gone", async () => {
    const name = fresh("delete");
    const target = endpoint("mcp-counter", name);
    const { client, transport } = await connect(target);
    const session = transport.sessionId!;
    await client.callTool({ name: "get", arguments: {} });
    await transport.terminateSession();
    const after = await rawPost(target, session, { jsonrpc: "2.0", id: 9, method: "tools/list" });
    expect(after.status).toBe(404);
    expect(await after.json()).toMatchObject({ error: { code: -32001, message: "Session not found" } });
    const rows = await runInDurableObject(counterStub(name), (_instance, ctx: DurableObjectState) =>
      ctx.storage.sql.exec("SELECT id FROM _dokit_mcp_sessions WHERE id = ?", session).toArray(),
    );
    expect(rows).toEqual([]);
    expect(await storedEvents(counterStub(name), session)).toEqual([]);
    await client.close();
  });

  it("refuse a request without a session id, and an unknown session id", async () => {
    const target = endpoint("mcp-counter", fresh("nosession"));
    const missing = await send(target, {
      method: "POST",
      headers: { accept: ACCEPT, "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(missing.status).toBe(400);
    const unknown = await rawPost(target, "not-a-session", { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(unknown.status).toBe(404);
  });

  it("answer an unknown method on a session with -32601", async () => {
    const target = endpoint("mcp-counter", fresh("rawmethod"));
    const session = await rawSession(target);
    const reader = new SseReader(await rawPost(target, session, { jsonrpc: "2.0", id: 5, method: "no/such-method" }), { events: true });
    const answer = await reader.nextMessage();
    expect(answer?.message).toMatchObject({ id: 5, error: { code: -32601 } });
  });

  it("send SSE keepalive comments while a stream is open", async () => {
    const target = endpoint("mcp-tuned", fresh("keepalive"));
    const session = await rawSession(target);
    const reader = new SseReader(await rawGet(target, session), { events: true });
    const started = Date.now();
    const frame = await reader.next(2000);
    expect(frame).toEqual({ comment: "keepalive" });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(await reader.next(2000)).toEqual({ comment: "keepalive" });
    await reader.cancel();
  });

  it("stay bound to the user they were created for after an eviction", async () => {
    const name = fresh("owner-evicted");
    const target = endpoint("mcp-counter", name);
    const as = (user: string) =>
      rawSessions((input, init) => send(input, { ...init, headers: { ...(init?.headers as Record<string, string>), "x-test-user": user } }));
    const alice = as("alice");
    const session = await alice.open(target);
    await evictDurableObject(counterStub(name));
    const call = { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "whoami", arguments: {} } };
    const stolen = await as("mallory").post(target, session, call);
    expect(stolen.status).toBe(404);
    expect(await stolen.json()).toMatchObject({ error: { code: -32001, message: "Session not found" } });
    const own = new SseReader(await alice.post(target, session, call), { events: true });
    // SAFETY: whoami answers with one text block of JSON.
    const answer = (await own.nextMessage())?.message as { result: { content: { text: string }[] } };
    expect(JSON.parse(answer.result.content[0]!.text)).toMatchObject({ user: "alice" });
    await own.cancel();
  });
});

// ---------------------------------------------------------------- resumability

describe("resumability (Last-Event-ID)", () => {
  it("replays only the missed events of that stream, after an eviction too", async () => {
    const logs = captureConsole();
    onTestFinished(() => {
      // A resume the SDK cannot place is reported through onError (console.warn by default), nothing else.
      for (const line of logs.warn) expect(line).toMatch(/^dokit: mcp: /);
      expect(logs.error).toEqual([]);
    });
    const name = fresh("replay");
    const target = endpoint("mcp-counter", name);
    const stub = counterStub(name);
    const session = await rawSession(target);
    const other = await rawSession(target);

    const live = new SseReader(await rawGet(target, session), { events: true });
    await stub.bump(1);
    const first = await live.nextMessage();
    expect(first?.message).toMatchObject({ method: "notifications/tools/list_changed" });
    expect(first?.id).toMatch(/^_GET_stream:\d+$/);
    await live.cancel();
    await sleep(50);

    // Missed while disconnected: two notifications, plus a tool call on its own POST stream.
    await stub.bump(1);
    await stub.bump(1);
    const call = new SseReader(await rawPost(target, session, { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "get", arguments: {} } }), { events: true });
    expect((await call.nextMessage())?.message).toMatchObject({ id: 7, result: { content: [{ text: "total 3" }] } });
    await evictDurableObject(stub);

    const resumed = new SseReader(await rawGet(target, session, first!.id), { events: true });
    const replayed = [await resumed.nextMessage(), await resumed.nextMessage()];
    expect(replayed.map((event) => event?.message.method)).toEqual([
      "notifications/tools/list_changed",
      "notifications/tools/list_changed",
    ]);
    for (const event of replayed) {
      expect(event?.id).toMatch(/^_GET_stream:\d+$/);
      expect(Number(event!.id!.split(":")[1])).toBeGreaterThan(Number(first!.id!.split(":")[1]));
    }
    await resumed.cancel();

    // Another session cannot replay this session's events.
    const foreign = await rawGet(target, other, first!.id);
    expect(foreign.status).toBe(400);
  });

  it("keeps a dropped response stream's events until the client resumes it, then clears them", async () => {
    const name = fresh("dropped");
    const target = endpoint("mcp-counter", name);
    const stub = counterStub(name);
    const session = await rawSession(target);
    const post = new SseReader(
      await rawPost(target, session, { jsonrpc: "2.0", id: 11, method: "tools/call", params: { name: "echo", arguments: { text: "late", delayMs: 300 } } }),
      { events: true },
    );
    const priming = await post.next();
    expect(priming?.id).toMatch(/^[0-9a-f-]{36}:\d+$/);
    await post.cancel();
    await sleep(500);
    const stream = priming!.id!.split(":")[0]!;
    expect((await storedEvents(stub, session)).find((row) => row.stream === stream)?.n).toBeGreaterThanOrEqual(2);

    const resumed = new SseReader(await rawGet(target, session, priming!.id), { events: true });
    const answer = await resumed.nextMessage();
    expect(answer?.message).toMatchObject({ id: 11, result: { content: [{ text: "late" }] } });
    expect(answer?.id?.startsWith(`${stream}:`)).toBe(true);
    expect(await resumed.next()).toBeUndefined();
    await sleep(20);
    expect((await storedEvents(stub, session)).find((row) => row.stream === stream)).toBeUndefined();
  });

  it("clears a response stream's events when it completes", async () => {
    const name = fresh("completed");
    const target = endpoint("mcp-counter", name);
    const session = await rawSession(target);
    const reader = new SseReader(await rawPost(target, session, { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "add", arguments: { a: 1 } } }), { events: true });
    expect((await reader.nextMessage())?.message).toMatchObject({ id: 3, result: { content: [{ text: "total 1" }] } });
    expect(await reader.next()).toBeUndefined();
    await sleep(20);
    expect((await storedEvents(counterStub(name), session)).filter((row) => row.stream !== "_GET_stream")).toEqual([]);
  });

  it("bounds the stored events of a stream", async () => {
    const name = fresh("bounded");
    const target = endpoint("mcp-tuned", name);
    const stub = env.MCP_TUNED.get(env.MCP_TUNED.idFromName(name));
    const session = await rawSession(target);
    for (let i = 0; i < 6; i++) await stub.toolsChanged();
    expect(await storedEvents(stub, session)).toEqual([{ stream: "_GET_stream", n: 3 }]);
  });

  // Deployed SQLite refuses a value over 2 MB; the local runtime's limit is higher (about 10 MB),
  // so the event here is 12 MiB: over both.
  it("keeps a dropped stream's 12 MiB result (over SQLite's row limit) in pieces and replays it whole", async () => {
    const name = fresh("oversized-event");
    const target = endpoint("mcp-counter", name);
    const stub = counterStub(name);
    const session = await rawSession(target);
    const size = 12 * 1024 * 1024;
    const post = new SseReader(
      await rawPost(target, session, { jsonrpc: "2.0", id: 12, method: "tools/call", params: { name: "echo", arguments: { text: "x", repeat: size, delayMs: 300 } } }),
      { events: true },
    );
    const priming = await post.next();
    await post.cancel();
    await sleep(1000);
    const stream = priming!.id!.split(":")[0]!;
    expect((await storedEvents(stub, session)).find((row) => row.stream === stream)?.n).toBeGreaterThanOrEqual(2);
    // 12 MiB of text plus its JSON-RPC envelope: thirteen pieces of 1 MiB.
    expect(await storedParts(stub, session)).toBe(13);

    const resumed = new SseReader(await rawGet(target, session, priming!.id), { events: true });
    const answer = await resumed.nextMessage(10_000);
    expect(answer?.message).toMatchObject({ id: 12, result: { content: [{ type: "text" }] } });
    // SAFETY: matched just above.
    const text = (answer!.message as { result: { content: { text: string }[] } }).result.content[0]!.text;
    expect(text.length === size && /^x*$/.test(text)).toBe(true);
    expect(await resumed.next()).toBeUndefined();
    await sleep(20);
    expect(await storedParts(stub, session)).toBe(0);
  });
});

// ---------------------------------------------------------------- security and bad input

describe("security and bad input", () => {
  const initialize = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  const post = (target: URL, body: string, headers: Record<string, string> = {}) =>
    send(target, { method: "POST", headers: { accept: ACCEPT, "content-type": "application/json", ...headers }, body });

  it("refuses a foreign Origin with 403 (its own hostname too) and allows localhost pages, with CORS headers", async () => {
    const target = endpoint("mcp-counter", fresh("origin"));
    const evil = await post(target, initialize, { origin: "https://evil.example" });
    expect(evil.status).toBe(403);
    expect(await evil.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32000, message: "Invalid Origin: evil.example" } });
    const nullOrigin = await post(target, initialize, { origin: "null" });
    expect(nullOrigin.status).toBe(403);
    // The hostname the request was addressed to is not allowed by default: a rebound page has it too.
    const own = await post(target, initialize, { origin: "http://example.com" });
    expect(own.status).toBe(403);
    const local = await post(target, initialize, { origin: "http://localhost:8787" });
    expect(local.status).toBe(200);
    expect(local.headers.get("access-control-allow-origin")).toBe("http://localhost:8787");
    expect(local.headers.get("access-control-expose-headers")).toMatch(/Mcp-Session-Id/);
    await local.text();
  });

  it("refuses a rebound request (foreign Host with its own Origin) with 403, and serves it without Origin", async () => {
    const target = endpoint("mcp-counter", fresh("host"));
    const rebound = await post(target, initialize, { host: "rebound.attacker.example", origin: "http://rebound.attacker.example" });
    expect(rebound.status).toBe(403);
    expect(await rebound.json()).toMatchObject({ error: { code: -32000, message: "Invalid Origin: rebound.attacker.example" } });
    // No Origin: not a browser; Host is checked only once allowedHosts lists hostnames.
    const tool = await post(target, initialize, { host: "rebound.attacker.example" });
    expect(tool.status).toBe(200);
    await tool.text();
  });

  it("answers a CORS preflight for an allowed origin and refuses others", async () => {
    const target = endpoint("mcp-tuned", fresh("preflight"));
    const ok = await send(target, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, mcp-session-id",
      },
    });
    expect(ok.status).toBe(204);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(ok.headers.get("access-control-allow-methods")).toBe("GET, POST, DELETE, OPTIONS");
    expect(ok.headers.get("access-control-allow-headers")).toBe("content-type, mcp-session-id");
    expect(ok.headers.get("access-control-max-age")).toBe("600");
    const refused = await send(target, { method: "OPTIONS", headers: { origin: "https://example.com", "access-control-request-method": "POST" } });
    expect(refused.status).toBe(403);
  });

  it("answers malformed bodies with -32700 and -32600", async () => {
    const target = endpoint("mcp-counter", fresh("malformed"));
    const cases: [string, number][] = [
      ["{", -32700],
      ["", -32700],
      ['{"foo":1}', -32600],
      ["[]", -32600],
      ['"text"', -32600],
      ['{"jsonrpc":"1.0","id":1,"method":"tools/list"}', -32600],
      ['{"jsonrpc":"2.0","id":{},"method":"tools/list"}', -32600],
    ];
    for (const [body, code] of cases) {
      const response = await post(target, body);
      expect(response.status, body).toBe(400);
      expect(await response.json(), body).toMatchObject({ jsonrpc: "2.0", error: { code } });
    }
    const wrongType = await post(target, initialize, { "content-type": "text/plain" });
    expect(wrongType.status).toBe(415);
  });

  it("refuses a body over the size limit with 413", async () => {
    const target = endpoint("mcp-tuned", fresh("large"));
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(4000) } });
    const response = await post(target, big);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: -32000 } });
    const small = await post(target, initialize);
    expect(small.status).toBe(200);
    await small.text();
  });

  it("returns a throwing tool's error as a tool result, without a stack", async () => {
    const { client } = await connect(endpoint("mcp-counter", fresh("throws")), { modern: true });
    const result = await client.callTool({ name: "fail", arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).not.toMatch(/\n\s+at |\.ts:\d+/);
    await client.close();
  });
});

afterAll(() => {
  // No response body of any test carried a stack trace.
  expect(errorBodies.length).toBeGreaterThan(0);
  for (const { body } of errorBodies) expect(body).not.toMatch(/\n\s+at |\.ts:\d+|\.js:\d+/);
});
