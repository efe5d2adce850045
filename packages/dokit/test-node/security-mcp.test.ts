// McpHandler's defences over real HTTP to the worker wrangler starts: bounded
// 2025-era sessions (size, count, idle lifetime), sessions bound to the user
// they were created for, and events larger than SQLite's 2 MB row limit.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, inject, it } from "vitest";
import { RAW_SESSION_VERSION, rawSessions } from "../test/mcp-raw-session";
import { SseReader } from "../test/sse-reader";
import { fresh, sleep } from "./helpers";
// A dropped stream's large result, kept in pieces and replayed whole, is tested inside
// workerd (test/mcp): there a client's disconnect reaches the object at once.

const base = new URL(inject("workerUrl"));
const ACCEPT = "application/json, text/event-stream";

/** The MCP endpoint of one object; `/authed/...` routes with props from `x-test-user` / `x-test-token`. */
const endpoint = (kebab: string, name: string, prefix = "agents") => new URL(`/${prefix}/${kebab}/${name}/mcp`, base);
/** How many session, event and event-part rows the object stores. */
async function rows(kebab: string, name: string): Promise<{ sessions: number; events: number; parts: number }> {
  const answer = await fetch(new URL(`/agents/${kebab}/${name}/rows`, base));
  expect(answer.status).toBe(200);
  return (await answer.json()) as { sessions: number; events: number; parts: number };
}

/** Raw 2025-era sessions whose requests carry `as` (the test's user headers). */
function as(user?: string, token?: string) {
  const extra: Record<string, string> = { ...(user !== undefined && { "x-test-user": user }), ...(token !== undefined && { "x-test-token": token }) };
  return rawSessions((input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...extra } }));
}
const anonymous = as();

/** Calls `echo` on a session. @returns the HTTP status and the JSON-RPC answer, when one came */
async function echo(sessions: ReturnType<typeof as>, target: URL, session: string, text = "hi"): Promise<{ status: number; answer?: Record<string, unknown> }> {
  const response = await sessions.post(target, session, { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: { text } } });
  if (response.headers.get("content-type")?.startsWith("text/event-stream")) {
    const reader = new SseReader(response, { events: true });
    const answer = (await reader.nextMessage())?.message;
    await reader.cancel();
    return { status: response.status, ...(answer && { answer }) };
  }
  return { status: response.status, answer: (await response.json()) as Record<string, unknown> };
}

/** An `initialize` whose params are padded to about `bytes`. */
function paddedInitialize(bytes: number): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: RAW_SESSION_VERSION, capabilities: {}, clientInfo: { name: "padded", version: "1.0.0", padding: "p".repeat(bytes) } },
  });
}

const opened: Client[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((client) => client.close().catch(() => {})));
});

describe("McpHandler bounds 2025-era sessions", () => {
  it("refuses an initialize whose params exceed maxSessionSize (default 64 KiB) with -32602 and no session", async () => {
    const name = fresh("oversized");
    const target = endpoint("mcp-guarded", name);
    const post = (body: string) => fetch(target, { method: "POST", headers: { accept: ACCEPT, "content-type": "application/json" }, body });
    const refused = await post(paddedInitialize(100_000));
    expect(refused.status).toBe(400);
    expect(refused.headers.get("mcp-session-id")).toBeNull();
    expect(await refused.json()).toMatchObject({ jsonrpc: "2.0", id: 1, error: { code: -32602, message: expect.stringContaining("65536 bytes") } });
    expect((await rows("mcp-guarded", name)).sessions).toBe(0);

    const accepted = await post(paddedInitialize(60_000));
    await accepted.text();
    expect(accepted.status).toBe(200);
    expect(accepted.headers.get("mcp-session-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect((await rows("mcp-guarded", name)).sessions).toBe(1);
  });

  it("refuses a resources/subscribe that would take the session past maxSessionSize, keeping the others", async () => {
    const name = fresh("subscriptions");
    const target = endpoint("mcp-guarded", name);
    const session = await anonymous.open(target);
    const subscribe = async (uri: string) => {
      const response = await anonymous.post(target, session, { jsonrpc: "2.0", id: 3, method: "resources/subscribe", params: { uri } });
      const reader = new SseReader(response, { events: true });
      const answer = (await reader.nextMessage())?.message;
      await reader.cancel();
      return answer;
    };
    expect(await subscribe("counter://small")).toMatchObject({ id: 3, result: {} });
    expect(await subscribe(`counter://${"u".repeat(70_000)}`)).toMatchObject({
      id: 3,
      error: { code: -32602, message: expect.stringContaining("maxSessionSize") },
    });
    expect((await echo(anonymous, target, session)).answer).toMatchObject({ result: { content: [{ text: "guarded: hi" }] } });
  });

  it("keeps at most maxSessions per object, ending the least recently used first", async () => {
    const name = fresh("lru");
    const target = endpoint("mcp-few-sessions", name);
    const first = await anonymous.open(target);
    await sleep(15);
    const second = await anonymous.open(target);
    await sleep(15);
    const third = await anonymous.open(target);
    await sleep(15);
    expect((await echo(anonymous, target, first)).status).toBe(200); // `second` is now the least recently used
    await sleep(15);
    const fourth = await anonymous.open(target);

    expect((await echo(anonymous, target, second)).answer).toMatchObject({ error: { code: -32001, message: "Session not found" } });
    for (const kept of [first, third, fourth]) {
      expect((await echo(anonymous, target, kept)).answer).toMatchObject({ result: { content: [{ text: "few: hi" }] } });
    }
    expect((await rows("mcp-few-sessions", name)).sessions).toBe(3);

    // A burst of new sessions never stores more than the cap.
    for (let i = 0; i < 8; i++) await anonymous.open(target);
    expect((await rows("mcp-few-sessions", name)).sessions).toBe(3);
  });

  it("expires a session idle longer than sessionTtlMs on its next use, without a timer or a new session", async () => {
    const name = fresh("idle");
    const target = endpoint("mcp-brief-sessions", name);
    const busy = await anonymous.open(target);
    const idle = await anonymous.open(target);
    // A session in use outlives the TTL.
    for (let i = 0; i < 4; i++) {
      await sleep(450);
      expect((await echo(anonymous, target, busy)).status).toBe(200);
    }
    const answer = await echo(anonymous, target, idle);
    expect(answer.status).toBe(404);
    expect(answer.answer).toMatchObject({ error: { code: -32001 } });
    expect((await rows("mcp-brief-sessions", name)).sessions).toBe(1);
  });
});

describe("McpHandler binds a 2025-era session to the user it was created for", () => {
  it("answers alice's session id under mallory's props (or none) with 404, and alice's session keeps working", async () => {
    const name = fresh("bound");
    const target = endpoint("mcp-guarded", name, "authed");
    const alice = as("alice");
    const mallory = as("mallory");
    const session = await alice.open(target);

    const stolen = await echo(mallory, target, session);
    expect(stolen.status).toBe(404);
    expect(stolen.answer).toMatchObject({ error: { code: -32001, message: "Session not found" } });
    expect((await echo(anonymous, target, session)).status).toBe(404);
    expect((await mallory.get(target, session)).status).toBe(404);
    const headers = { "mcp-session-id": session, "mcp-protocol-version": RAW_SESSION_VERSION, "x-test-user": "mallory" };
    expect((await fetch(target, { method: "DELETE", headers })).status).toBe(404);

    expect((await echo(alice, target, session)).answer).toMatchObject({ result: { content: [{ text: "guarded: hi" }] } });
  });

  it("with sessionOwner, follows the user across per-request props and refuses another user", async () => {
    const name = fresh("owner");
    const target = endpoint("mcp-user-sessions", name, "authed");
    const session = await as("alice", "token-1").open(target);
    expect((await echo(as("alice", "token-2"), target, session)).answer).toMatchObject({ result: { content: [{ text: "user: hi" }] } });
    expect((await echo(as("mallory", "token-1"), target, session)).status).toBe(404);
  });
});

describe("McpHandler events over SQLite's 2 MB row limit", () => {
  // Deployed SQLite refuses a value over 2 MB; the local runtime's limit is higher (about 10 MB),
  // so the result here is 12 MiB: over both.
  const LARGE = 12 * 1024 * 1024;

  it("delivers a 12 MiB tool result on a live stream to the official client (2025-era session)", async () => {
    const name = fresh("big-live");
    const client = new Client({ name: "dokit-node-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(endpoint("mcp-guarded", name)));
    opened.push(client);
    const result = await client.callTool({ name: "big", arguments: { bytes: LARGE } }, { timeout: 10_000 });
    // SAFETY: the big tool answers with one text block.
    expect((result as { content: { text: string }[] }).content[0]!.text.length).toBe(LARGE);
    await sleep(50);
    // The completed stream's events (and their pieces) are cleared.
    expect(await rows("mcp-guarded", name)).toMatchObject({ parts: 0 });
  });
});
