import { evictDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ConnectionView, InspectorSnapshot } from "../../src/inspector";
import { IDENTITY, STATE } from "../../src/protocol";
import { openSocket, type TestSocket, type Upgrader } from "../../src/testing";
import { captureConsole } from "../logs";
import { fresh } from "../helpers";
import { rawSessions } from "../mcp-raw-session";
import { publicIdOf } from "../public-id";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: Upgrader }).default;
const LOCAL = "http://localhost";

/** What a client can tell of an answer: status, body and the headers that differ between answers. */
async function seen(response: Response): Promise<{ status: number; body: string; type: string | null; csp: string | null }> {
  return {
    status: response.status,
    body: await response.text(),
    type: response.headers.get("content-type"),
    csp: response.headers.get("content-security-policy"),
  };
}
const get = (url: string, headers: Record<string, string> = {}) => worker.fetch(url, { headers });

/** @returns what an unclaimed path of the same object answers */
const unclaimed = async (base: string, headers: Record<string, string> = {}) => seen(await get(`${base}/nothing-here`, headers));

/** The feed's messages, parsed. */
type FeedMessage = { kind: "snapshot"; snapshot: InspectorSnapshot } | { kind: "event"; channel: string; event: Record<string, unknown> } | { kind: "error"; message: string };

/** Opens a page's feed. @returns the socket and its first message (the snapshot) */
async function openFeed(base: string, headers: Record<string, string> = {}): Promise<{ feed: TestSocket; snapshot: InspectorSnapshot }> {
  const feed = await openSocket(worker, `${base}/__dokit/feed`, { headers });
  const first = await feed.nextJSON<FeedMessage>();
  if (first.kind !== "snapshot") throw new Error(`expected a snapshot first, got ${JSON.stringify(first)}`);
  return { feed, snapshot: first.snapshot };
}

/** Reads feed messages until one matches. */
async function until(feed: TestSocket, match: (message: FeedMessage) => boolean): Promise<FeedMessage> {
  for (;;) {
    const message = await feed.nextJSON<FeedMessage>(5000);
    if (match(message)) return message;
  }
}

/** Opens a user connection and reads its connect frames (identity, state). */
async function join(base: string, query: Record<string, string> = {}): Promise<TestSocket> {
  const socket = await openSocket(worker, base, { query });
  await socket.frames(2);
  return socket;
}

describe("Inspector: off unless enabled, and guarded", () => {
  it("does not exist when not enabled: every path answers as an unclaimed one", async () => {
    const base = `${LOCAL}/agents/disabled-room/${fresh("disabled")}`;
    const expected = await unclaimed(base);
    expect(expected.status).toBe(404);
    for (const path of ["/__dokit", "/__dokit/", "/__dokit/snapshot", "/__dokit/page.js"]) {
      expect(await seen(await get(`${base}${path}`)), path).toEqual(expected);
    }
    // An upgrade on the feed path is what an upgrade on any path is: a user connection.
    const socket = await openSocket(worker, `${base}/__dokit/feed`);
    expect(await socket.nextJSON()).toMatchObject({ type: IDENTITY });
    await socket.close();
  });

  it("does not exist when authorize refuses", async () => {
    const base = `${LOCAL}/agents/refusing-room/${fresh("refusing")}`;
    const expected = await unclaimed(base);
    expect(expected.status).toBe(404);
    for (const path of ["/__dokit", "/__dokit/snapshot", "/__dokit/page.js"]) {
      expect(await seen(await get(`${base}${path}`)), path).toEqual(expected);
    }
    const socket = await openSocket(worker, `${base}/__dokit/feed`);
    expect(await socket.nextJSON()).toMatchObject({ type: IDENTITY });
    await socket.close();
  });

  it("answers only localhost by default, and never another site", async () => {
    const name = fresh("guard");
    const local = `${LOCAL}/agents/inspected-room/${name}`;
    const page = await get(`${local}/__dokit`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(await page.text()).toContain(`<script src="__dokit/page.js"></script>`);
    expect(await (await get(`${local}/__dokit/`)).text()).toContain(`<script src="page.js"></script>`);
    for (const host of ["127.0.0.1:8787", "[::1]"]) {
      expect((await get(`http://${host}/agents/inspected-room/${name}/__dokit/snapshot`)).status, host).toBe(200);
    }

    // A deployed hostname, or a DNS-rebound one (Host names the attacker's host).
    const remote = `http://example.com/agents/inspected-room/${name}`;
    expect(await seen(await get(`${remote}/__dokit`))).toEqual(await unclaimed(remote));
    // Another site's page, on localhost.
    const foreign: Record<string, string>[] = [{ Origin: "http://evil.example" }, { Origin: "http://localhost:9999" }, { "Sec-Fetch-Site": "cross-site" }, { "Sec-Fetch-Site": "same-site" }];
    for (const headers of foreign) {
      expect(await seen(await get(`${local}/__dokit/snapshot`, headers)), JSON.stringify(headers)).toEqual(await unclaimed(local, headers));
    }
    // The same site's own page may (its Origin is the request's own).
    expect((await get(`${local}/__dokit/snapshot`, { Origin: LOCAL, "Sec-Fetch-Site": "same-origin" })).status).toBe(200);
    // A cross-site feed upgrade is an ordinary user connection, never the feed.
    const socket = await openSocket(worker, `${local}/__dokit/feed`, { headers: { Origin: "http://evil.example" } });
    expect(await socket.nextJSON()).toMatchObject({ type: IDENTITY });
    await socket.close();
  });

  it("falls through to the host's onRequest, at a custom path", async () => {
    const base = `${LOCAL}/agents/host-routed-room/${fresh("host")}`;
    const expected = await unclaimed(base);
    expect(expected).toMatchObject({ status: 418, body: "host's own answer to " + new URL(`${base}/nothing-here`).pathname });
    const refused = await seen(await get(`${base}/debug`));
    expect(refused).toEqual({ ...expected, body: expected.body.replace("/nothing-here", "/debug") });
    expect((await get(`${base}/debug`, { "x-debug": "yes" })).status).toBe(200);
    // No Observability on this object: the snapshot says events are off (the page shows how to turn them on).
    expect(await (await get(`${base}/debug/snapshot`, { "x-debug": "yes" })).json()).toMatchObject({ agent: "HostRoutedRoom", events: false });
    // The default path is not claimed when another is configured.
    expect((await get(`${base}/__dokit`, { "x-debug": "yes" })).status).toBe(418);
  });

  it("falls through to a delegating host's own fallback", async () => {
    const base = `${LOCAL}/agents/delegating-room/${fresh("delegating")}`;
    const expected = await unclaimed(base);
    expect(expected).toMatchObject({ status: 404, body: "the delegating host's fallback" });
    expect(await seen(await get(`${base}/__dokit`))).toEqual(expected);
  });

  it("refuses (logs, falls through) when authorize throws", async () => {
    const logs = captureConsole();
    const base = `${LOCAL}/agents/host-routed-room/${fresh("throwing")}`;
    const refused = await seen(await get(`${base}/debug`, { "x-debug": "throw" }));
    expect(refused).toMatchObject({ status: 418, body: expect.stringContaining("host's own answer") });
    expect(logs.error).toEqual(["dokit: the Inspector's authorize hook threw; refusing the request Error: hook broke"]);
  });
});

describe("Inspector: the snapshot", () => {
  it("lists connections with their tags, flags, state and age, the synced state and the jobs", async () => {
    const name = fresh("snapshot");
    const base = `${LOCAL}/agents/inspected-room/${name}`;
    const stub = env.INSPECTED_ROOM.get(env.INSPECTED_ROOM.idFromName(name));
    const viewer = await join(base, { _pk: "viewer-1", tags: "red,blue", mode: "view" });
    const editor = await join(base, { _pk: "editor-1" });
    expect(await editor.rpc("increment")).toBe(1);
    await stub.addReminder();

    const response = await get(`${base}/__dokit/snapshot`);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const snapshot = (await response.json()) as InspectorSnapshot;
    expect(snapshot).toMatchObject({ agent: "InspectedRoom", className: "inspected-room", name, events: true, state: { value: { count: 1 } }, queue: [] });
    expect(typeof snapshot.instance).toBe("string");
    expect(snapshot.now).toBeGreaterThanOrEqual(snapshot.since);
    // SAFETY: the section reads without error here (a failing one is { error }).
    const connections = snapshot.connections as ConnectionView[];
    expect(connections.map((c) => c.id).sort()).toEqual(["editor-1", "viewer-1"]);
    const viewerView = connections.find((c) => c.id === "viewer-1");
    expect(viewerView).toMatchObject({ tags: ["viewer-1", "red", "blue"], readonly: true, protocol: true, readyState: "open", state: null });
    // Query values are hidden by default (showQueryValues shows them); names stay.
    expect(viewerView?.uri).toContain("mode=redacted");
    expect(viewerView?.connectedAt).toBeTypeOf("number");
    expect(connections.find((c) => c.id === "editor-1")).toMatchObject({ tags: ["editor-1"], readonly: false });
    expect(snapshot.schedules).toEqual([expect.objectContaining({ callback: "remind", payload: { text: "later" }, type: "delayed" })]);
    expect(snapshot.tasks).toEqual([
      expect.objectContaining({
        runId: "approval",
        definition: "approve",
        state: "waiting",
        reason: "event",
        attempt: 1,
        steps: [
          { name: "ask", kind: "do", state: "done", attempts: 1 },
          { name: "answer", kind: "event", state: "waiting", attempts: 0 },
        ],
      }),
    ]);
    await viewer.close();
    await editor.close();
  });
});

describe("Inspector: MCP", () => {
  it("lists the MCP server's sessions and the MCP client's servers; a failing section shows its error", async () => {
    const base = `${LOCAL}/agents/mcp-room/${fresh("mcp")}`;
    const before = (await (await get(`${base}/__dokit/snapshot`)).json()) as InspectorSnapshot;
    expect(before).toMatchObject({ mcpSessions: [], mcpServers: { "srv-1": { name: "calendar", state: "ready" } } });
    // What keeps the object awake, as the MCP client capability reports it.
    expect(before.keepsAwake).toEqual(["MCP server srv-1 (https://calendar.test/mcp): notification stream open, closes after 30000 ms without use"]);
    // A section that throws shows its message (no stack); the others are read as usual.
    expect(before.queue).toEqual({ error: "queue table is locked" });
    const session = await rawSessions((url, init) => worker.fetch(new Request(url, init))).open(new URL(`${base}/mcp`));
    const after = (await (await get(`${base}/__dokit/snapshot`)).json()) as InspectorSnapshot;
    expect(after.mcpSessions).toEqual([{ id: session, lastSeen: expect.any(Number), subscriptions: [] }]);
  });
});

describe("Inspector: presence and what keeps the object awake", () => {
  it("lists who is here, and a presence or coalescing tick while one waits, then nothing", async () => {
    const base = `${LOCAL}/agents/presence-room/${fresh("presence")}`;
    const socket = await openSocket(worker, base, { query: { _pk: "ann" } });
    await socket.nextJSON();
    socket.send({ type: "dokit_presence", value: { name: "Ann" }, watch: false });
    socket.send("move");
    await expect.poll(async () => ((await (await get(`${base}/__dokit/snapshot`)).json()) as InspectorSnapshot).keepsAwake).toEqual([
      "websockets: 1 coalesced broadcast(s) waiting for the tick",
      "presence: 1 change(s) waiting for the 1000 ms tick",
    ]);
    const waiting = (await (await get(`${base}/__dokit/snapshot`)).json()) as InspectorSnapshot;
    expect(waiting.presence).toEqual([{ id: "ann", publicId: publicIdOf("ann"), value: { name: "Ann" } }]);
    // Both ticks fire, and nothing is left holding the object.
    expect(await socket.next(3000)).toBe("move");
    await expect.poll(async () => ((await (await get(`${base}/__dokit/snapshot`)).json()) as InspectorSnapshot).keepsAwake, { timeout: 3000 }).toEqual([]);
    await socket.close();
  });
});

describe("Inspector: a heartbeat sweep", () => {
  it("shows when the sweep's alarm wakes the object, once a socket armed it", async () => {
    const base = `${LOCAL}/agents/swept-room/${fresh("sweep")}`;
    const snapshot = async () => ((await (await get(`${base}/__dokit/snapshot`)).json()) as InspectorSnapshot).keepsAwake;
    expect(await snapshot()).toEqual([]);
    const socket = await openSocket(worker, base);
    await socket.nextJSON();
    const [line] = (await snapshot()) as string[];
    const at = /^heartbeat sweep: the alarm wakes the object at (\S+), then every 60000 ms while sockets are open$/.exec(line ?? "")?.[1];
    // The next multiple of a minute after now.
    expect(Date.parse(at ?? "") % 60_000).toBe(0);
    expect(Date.parse(at ?? "") - Date.now()).toBeGreaterThan(0);
    expect(Date.parse(at ?? "") - Date.now()).toBeLessThanOrEqual(60_000);
    await socket.close();
  });
});

describe("Inspector: the feed", () => {
  it("is not a user connection: never listed, never broadcast to", async () => {
    const name = fresh("feed");
    const base = `${LOCAL}/agents/inspected-room/${name}`;
    const stub = env.INSPECTED_ROOM.get(env.INSPECTED_ROOM.idFromName(name));
    const user = await join(base, { _pk: "user-1" });
    const { feed, snapshot } = await openFeed(base);
    expect(snapshot.connections).toEqual([expect.objectContaining({ id: "user-1" })]);
    expect(await stub.connectionIds()).toEqual(["user-1"]);
    await stub.broadcast("to everyone");
    expect(await user.next()).toBe("to everyone");
    expect(await user.rpc("increment")).toBe(1);
    // The text and the state broadcast reach the user only: the feed carries its own messages, never a frame.
    const carried = (await feed.drain(100)).map((message) => JSON.parse(message as string) as FeedMessage);
    expect(carried.every((message) => message.kind === "event" || message.kind === "snapshot")).toBe(true);
    await feed.close();
    await user.close();
  });

  it("forwards the events of its own object, live, and no other object's", async () => {
    const name = fresh("events");
    const base = `${LOCAL}/agents/inspected-room/${name}`;
    const stub = env.INSPECTED_ROOM.get(env.INSPECTED_ROOM.idFromName(name));
    const other = env.INSPECTED_ROOM.get(env.INSPECTED_ROOM.idFromName(`${name}-other`));
    const { feed } = await openFeed(base);
    const event = (forName: string, type: string) => ({ type, agent: "InspectedRoom", name: forName, timestamp: Date.now(), payload: { method: "increment", durationMs: 1.5, connectionId: "c1" } });
    await other.publish("agents:rpc", event(`${name}-other`, "rpc"));
    await stub.publish("agents:rpc", { ...event(name, "rpc"), agent: "SomeOtherClass" });
    await stub.publish("agents:rpc", event(name, "rpc"));
    expect(await until(feed, (m) => m.kind === "event")).toEqual({ kind: "event", channel: "agents:rpc", event: event(name, "rpc") && expect.objectContaining({ type: "rpc", name, payload: expect.objectContaining({ durationMs: 1.5 }) }) });
    // A page that opens later receives the recent events after its snapshot.
    const late = await openFeed(base);
    expect(await late.feed.nextJSON()).toMatchObject({ kind: "event", channel: "agents:rpc", event: { type: "rpc", name } });
    expect(await late.feed.drain(50)).toEqual([]);
    await feed.close();
    await late.feed.close();
  });

  it("shows the events the capabilities publish: a connection opening, an rpc with its timing", async () => {
    const name = fresh("published");
    const base = `${LOCAL}/agents/inspected-room/${name}`;
    const { feed } = await openFeed(base);
    const user = await join(base, { _pk: "caller" });
    expect(await until(feed, (m) => m.kind === "event" && m.event.type === "connect")).toMatchObject({
      channel: "agents:lifecycle",
      event: { agent: "InspectedRoom", name, payload: { connectionId: "caller" } },
    });
    expect(await user.rpc("increment")).toBe(1);
    const rpc = await until(feed, (m) => m.kind === "event" && m.event.type === "rpc");
    expect(rpc).toMatchObject({ channel: "agents:rpc", event: { name, payload: { connectionId: "caller", method: "increment", ok: true } } });
    expect(rpc.kind === "event" && rpc.event.payload).toHaveProperty("durationMs", expect.any(Number));
    await feed.close();
    await user.close();
  });

  it("closes a connection and toggles readonly from the page; every page sees the result", async () => {
    const name = fresh("actions");
    const base = `${LOCAL}/agents/inspected-room/${name}`;
    const user = await join(base, { _pk: "target" });
    const bystander = await join(base, { _pk: "bystander" });
    const { feed } = await openFeed(base);

    feed.send({ action: "readonly", id: "target", readonly: true });
    const afterReadonly = await until(feed, (m) => m.kind === "snapshot");
    expect(afterReadonly.kind === "snapshot" && afterReadonly.snapshot.connections).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: "target", readonly: true })]),
    );
    // The flag is real: the connection's state frames are refused now.
    user.send({ type: STATE, state: { count: 99 } });
    expect(await user.nextJSON()).toEqual({ type: "cf_agent_state_error", error: "Connection is readonly" });

    feed.send({ action: "close", id: "target" });
    expect(await user.closed).toEqual({ code: 1000, reason: "Closed from the dokit inspector" });
    const afterClose = await until(feed, (m) => m.kind === "snapshot");
    expect(afterClose.kind === "snapshot" && afterClose.snapshot.connections).toEqual([expect.objectContaining({ id: "bystander" })]);

    // Bad actions are answered, never crash the object or touch other connections.
    for (const bad of ["not json", JSON.stringify({ action: "close", id: "nobody" }), JSON.stringify({ action: "explode", id: "bystander" }), JSON.stringify({ action: "close" })]) {
      feed.send(bad);
      expect(await until(feed, () => true), bad).toMatchObject({ kind: "error" });
    }
    expect(await bystander.rpc("increment")).toBe(1);
    await feed.close();
    await bystander.close();
  });

  it("pins the object while open; after a wake a new feed reads the new instance, with the hibernated connections", async () => {
    const name = fresh("evict");
    const base = `${LOCAL}/agents/inspected-room/${name}`;
    const stub = env.INSPECTED_ROOM.get(env.INSPECTED_ROOM.idFromName(name));
    const user = await join(base, { _pk: "sleeper", tags: "night" });
    const { feed, snapshot: before } = await openFeed(base);
    // The feed is a plain (non-hibernating) socket: the object cannot hibernate while it is open.
    const evicted = evictDurableObject(stub).then(() => "evicted");
    expect(await Promise.race([evicted, new Promise((resolve) => setTimeout(() => resolve("pinned"), 500))])).toBe("pinned");
    await feed.close();
    expect(await evicted).toBe("evicted");
    const { feed: again, snapshot: after } = await openFeed(base);
    expect(after.instance).not.toBe(before.instance);
    expect(after.since).toBeGreaterThanOrEqual(before.since);
    // The user's socket hibernated and is listed again; when it opened is unknown to the new instance.
    expect(after.connections).toEqual([expect.objectContaining({ id: "sleeper", tags: ["sleeper", "night"], connectedAt: null })]);
    expect(await user.rpc("increment")).toBe(1);
    await again.close();
    await user.close();
  });

});
