import { evictDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { openSocket, type TestSocket } from "../../src/testing";
import { defaultUrlRefusal, isLoopbackHost, isPrivateHost } from "../../src/mcp-client/url-policy";
import { captureConsole } from "../logs";
import { fresh, sleep, textOf } from "../helpers";
import { type McpEvent, subscribe } from "../../src/observability";
import { McpClients } from "../../src/mcp-client";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
const serverUrl = (name: string) => `https://mcp.test/agents/mcp-server/${name}/mcp`;
/** The client objects' RPC methods, loosely typed (SAFETY: the SDK's result types are too deep for stub types; tests check values). */
type Fn = (...args: any[]) => Promise<any>;
type Api = DurableObjectStub & {
  [K in "ping" | "add" | "addError" | "remove" | "servers" | "ready" | "catalogue" | "state" | "callTool" | "callToolError" | "readResource" | "getPrompt" | "storedRows" | "tableExists" | "spoilAccessToken" | "accessToken" | "expireStates"]: Fn;
};
const assistant = (name: string) => env.ASSISTANT.get(env.ASSISTANT.idFromName(name)) as unknown as Api;
const tight = (name: string) => env.TIGHT_ASSISTANT.get(env.TIGHT_ASSISTANT.idFromName(name)) as unknown as Api;

type McpFrame = { type: "cf_agent_mcp_servers"; mcp: { servers: Record<string, { state: string; error: string | null; [k: string]: unknown }>; tools: { name: string; serverId: string }[]; prompts: unknown[]; resources: unknown[] } };

/** Reads frames until an MCP-servers frame matching `check` arrives. */
async function mcpFrame(socket: TestSocket, check: (frame: McpFrame) => boolean, timeout = 4000): Promise<McpFrame> {
  const end = Date.now() + timeout;
  for (;;) {
    const left = end - Date.now();
    if (left <= 0) throw new Error("no matching cf_agent_mcp_servers frame");
    const frame = JSON.parse(String(await socket.next(left))) as { type: string };
    if (frame.type === "cf_agent_mcp_servers" && check(frame as McpFrame)) return frame as McpFrame;
  }
}

describe("McpClients against an McpHandler object", () => {
  it("adds a server, lists its catalogue with server ids, and calls a tool, a prompt and a resource", async () => {
    const stub = assistant(fresh("a"));
    const result = await stub.add("counter", serverUrl(fresh("srv")), { id: "counter", transport: { listen: false } });
    expect(result).toEqual({ id: "counter", state: "ready" });
    const { tools, prompts, resources } = await stub.catalogue();
    expect(tools.map((t: { name: string }) => t.name).sort()).toEqual(["add", "ask", "get", "grow", "key", "summarize"]);
    expect(tools.every((t: { serverId: string }) => t.serverId === "counter")).toBe(true);
    expect(prompts).toMatchObject([{ name: "greet", serverId: "counter" }]);
    expect(resources).toMatchObject([{ uri: "memo://readme", serverId: "counter" }]);
    expect(textOf(await stub.callTool("counter", "add", { a: 2 }))).toBe("total 2");
    expect(textOf(await stub.callTool("counter", "add", { a: 3 }))).toBe("total 5");
    const prompt = await stub.getPrompt("counter", "greet", { who: "Ada" });
    expect(prompt.messages[0]?.content).toEqual({ type: "text", text: "Hello Ada" });
    const resource = await stub.readResource("counter", "memo://readme");
    expect(resource.contents[0]).toMatchObject({ text: "read me" });
    const state = await stub.state();
    expect(state.servers.counter).toMatchObject({ name: "counter", state: "ready", error: null, auth_url: null, instructions: "Counts things." });
    expect(state.servers.counter?.capabilities).toMatchObject({ tools: {} });
  });

  it("answers a server's elicitation and sampling through the onElicitation and onSampling handlers", async () => {
    const stub = assistant(fresh("elicit"));
    await stub.add("counter", serverUrl(fresh("srv")), { id: "abcd", transport: { listen: false, headers: { "x-api-key": "k2" } } });
    expect(textOf(await stub.callTool("abcd", "ask"))).toBe("amount 4");
    expect(textOf(await stub.callTool("abcd", "key"))).toBe("k2"); // the reference's place for headers works too
    expect(textOf(await stub.callTool("abcd", "summarize"))).toBe("model said: short (for abcd)"); // sampling, through onSampling
  });

  it("fails a server whose tool list is larger than maxCatalogueSize (default 500), keeping no partial catalogue", async () => {
    const stub = assistant(fresh("huge"));
    const result = await stub.add("huge", serverUrl(fresh("huge-")), { id: "huge", transport: { listen: false } });
    expect(result).toMatchObject({ id: "huge", state: "failed", error: expect.stringMatching(/offers 60\d tools, more than the 500 allowed/) });
    expect((await stub.catalogue()).tools).toEqual([]);
  });

  it("keeps the registry in SQLite: after eviction nothing reconnects until first use, then tools list and calls work", async () => {
    const name = fresh("evict");
    const stub = assistant(name);
    const srv = fresh("srv");
    await stub.add("counter", serverUrl(srv), { id: "c1", transport: { listen: false } });
    expect(textOf(await stub.callTool("c1", "add", { a: 1 }))).toBe("total 1");
    await evictDurableObject(stub);
    // The constructor and start connect nothing: the first read after the wake shows the server connecting.
    const first = await stub.servers();
    expect(first).toMatchObject([{ id: "c1", name: "counter", state: "connecting" }]);
    expect(textOf(await stub.callTool("c1", "add", { a: 1 }))).toBe("total 2");
    const settled = await stub.ready();
    expect(settled.servers.c1?.state).toBe("ready");
    expect(settled.tools.map((t: { name: string }) => t.name)).toContain("get");
  });

  it("with connectOnStart, reconnects stored servers in the background when the object starts", async () => {
    const stub = env.EAGER_ASSISTANT.get(env.EAGER_ASSISTANT.idFromName(fresh("eager"))) as unknown as Api;
    await stub.add("counter", serverUrl(fresh("srv")), { id: "e", transport: { listen: false } });
    await evictDurableObject(stub);
    expect(await stub.ping()).toBe("pong"); // start returned without waiting for the server
    await sleep(300);
    // The first read after the wake finds the server already reconnected.
    expect((await stub.servers())[0]).toMatchObject({ id: "e", state: "ready" });
  });

  it("creates no table until a server is added", async () => {
    const stub = assistant(fresh("lazy"));
    expect(await stub.state()).toEqual({ servers: {}, tools: [], prompts: [], resources: [] });
    expect(await stub.tableExists()).toBe(false);
  });

  it("removes a server and its stored row", async () => {
    const stub = assistant(fresh("rm"));
    await stub.add("counter", serverUrl(fresh("srv")), { id: "gone", transport: { listen: false } });
    expect(await stub.remove("gone")).toBe(true);
    expect(await stub.servers()).toEqual([]);
    expect(await stub.storedRows()).toEqual([]);
    expect(await stub.callToolError("gone", "get")).toMatchObject({ code: "UNKNOWN_SERVER" });
    expect(await stub.remove("gone")).toBe(false);
  });

  it("refreshes the catalogue on a tools/list_changed notification", async () => {
    const stub = assistant(fresh("changed"));
    await stub.add("counter", serverUrl(fresh("srv")), { id: "live" });
    expect((await stub.catalogue()).tools.map((t: { name: string }) => t.name)).not.toContain("extra");
    await stub.callTool("live", "grow");
    const end = Date.now() + 4000;
    let names: string[] = [];
    while (Date.now() < end) {
      names = (await stub.catalogue()).tools.map((t: { name: string }) => t.name);
      if (names.includes("extra")) break;
      await sleep(50);
    }
    expect(names).toContain("extra");
    await stub.remove("live");
  });
});

describe("cf_agent_mcp_servers", () => {
  it("arrives on connect after identity, and after each change, for protocol connections only", async () => {
    const name = fresh("frames");
    const socket = await openSocket(worker, `http://example.com/agents/assistant/${name}`);
    const sensor = await openSocket(worker, `http://example.com/agents/assistant/${name}?client=sensor`);
    const identity = JSON.parse(String(await socket.next())) as { type: string };
    expect(identity.type).toBe("cf_agent_identity");
    const empty = JSON.parse(String(await socket.next())) as McpFrame;
    expect(empty).toEqual({ type: "cf_agent_mcp_servers", mcp: { servers: {}, tools: [], prompts: [], resources: [] } });

    const stub = assistant(name);
    await stub.add("counter", serverUrl(fresh("srv")), { id: "s1", headers: { "x-api-key": "sekret-api-key" }, transport: { listen: false } });
    const connecting = await mcpFrame(socket, (f) => f.mcp.servers.s1?.state === "connecting");
    expect(connecting.mcp.servers.s1).toEqual({
      name: "counter",
      server_url: expect.stringContaining("https://mcp.test/"),
      auth_url: null,
      state: "connecting",
      error: null,
      instructions: null,
      capabilities: null,
    });
    const ready = await mcpFrame(socket, (f) => f.mcp.servers.s1?.state === "ready");
    expect(ready.mcp.tools.map((t) => `${t.serverId}:${t.name}`)).toContain("s1:add");
    expect(JSON.stringify(ready)).not.toContain("sekret");
    expect(textOf(await stub.callTool("s1", "key"))).toBe("sekret-api-key"); // the header reached the server

    // A new connection gets the current list in its connect sequence.
    const late = await openSocket(worker, `http://example.com/agents/assistant/${name}`);
    expect(JSON.parse(String(await late.next())).type).toBe("cf_agent_identity");
    const current = JSON.parse(String(await late.next())) as McpFrame;
    expect(current.mcp.servers.s1?.state).toBe("ready");

    await stub.remove("s1");
    await mcpFrame(socket, (f) => Object.keys(f.mcp.servers).length === 0);
    // The suppressed connection never received any protocol frame.
    await expect(sensor.next(300)).rejects.toThrow();
    for (const s of [socket, sensor, late]) s.close();
  });
});

describe("the default URL policy", () => {
  it.each([
    ["localhost", true], ["api.localhost", true], ["printer.local", true], ["db.internal", true],
    ["127.0.0.1", true], ["127.255.0.9", true], ["10.0.0.1", true], ["172.16.0.1", true], ["172.31.255.255", true],
    ["192.168.1.1", true], ["169.254.169.254", true], ["100.64.0.1", true], ["0.0.0.0", true], ["224.0.0.1", true],
    ["[::1]", true], ["[::]", true], ["[fc00::1]", true], ["[fd12:3456::1]", true], ["[fe80::1]", true],
    ["[::ffff:127.0.0.1]", true], ["[::ffff:7f00:1]", true], ["[::ffff:a00:1]", true],
    ["example.com", false], ["8.8.8.8", false], ["172.32.0.1", false], ["100.128.0.1", false], ["[2606:4700::1111]", false], ["[::ffff:808:808]", false],
  ] as const)("isPrivateHost(%s) is %s", (host, expected) => {
    expect(isPrivateHost(new URL(`https://${host}/`).hostname)).toBe(expected);
  });

  // Every block of the IANA IPv4 and IPv6 special-purpose registries that is not globally reachable, and the IPv6 forms that embed an IPv4 address.
  it.each([
    // IPv4
    ["0.1.2.3", true], ["10.255.255.255", true], ["100.64.0.0", true], ["100.127.255.255", true], ["127.0.0.2", true],
    ["169.254.169.254", true], ["172.16.0.0", true], ["192.0.0.170", true], ["192.0.0.8", true], ["192.0.2.1", true],
    ["192.88.99.1", true], ["192.168.0.1", true], ["198.18.0.1", true], ["198.19.255.255", true], ["198.51.100.7", true],
    ["203.0.113.9", true], ["224.0.0.251", true], ["239.255.255.250", true], ["240.0.0.1", true], ["255.255.255.255", true],
    ["100.63.255.255", false], ["172.15.255.255", false], ["192.0.1.1", false], ["198.20.0.1", false], ["1.1.1.1", false], ["223.255.255.254", false],
    // IPv6
    ["[::]", true], ["[::1]", true], ["[::7f00:1]", true], ["[::a9fe:a9fe]", true], ["[::808:808]", true],
    ["[::ffff:a9fe:a9fe]", true], ["[::ffff:c612:1]", true], ["[64:ff9b::a9fe:a9fe]", true], ["[64:ff9b::7f00:1]", true],
    ["[64:ff9b:1::1]", true], ["[100::1]", true], ["[2001::1]", true], ["[2001:0:4136:e378:8000:63bf:3fff:fdd2]", true],
    ["[2001:2::1]", true], ["[2001:10::1]", true], ["[2001:db8::1]", true], ["[2002:a9fe:a9fe::]", true], ["[2002:7f00:1::1]", true],
    ["[2002:c0a8:101::1]", true], ["[3fff::1]", true], ["[5f00::1]", true], ["[fc00::1]", true], ["[fd00:ec2::254]", true],
    ["[fe80::1]", true], ["[fec0::1]", true], ["[ff02::1]", true], ["[4000::1]", true],
    ["[2606:4700:4700::1111]", false], ["[2a00:1450:4001:80b::200e]", false], ["[2001:4860:4860::8888]", false],
    ["[::ffff:808:808]", false], ["[64:ff9b::808:808]", false], ["[2002:808:808::1]", false], ["[2400:cb00::1]", false],
    // names
    ["router.home.arpa", true], ["metadata.google.internal", true], ["example.com", false],
  ] as const)("the special-purpose registries: isPrivateHost(%s) is %s", (host, expected) => {
    expect(isPrivateHost(new URL(`https://${host}/`).hostname)).toBe(expected);
  });

  it("allows https to public hosts, and http or private hosts only in local development", () => {
    const check = (url: string, local: boolean) => defaultUrlRefusal(new URL(url), local);
    expect(check("https://example.com/mcp", false)).toBeUndefined();
    expect(check("http://example.com/mcp", false)).toMatch(/only https/);
    expect(check("https://192.168.0.2/mcp", false)).toMatch(/private and loopback/);
    expect(check("http://127.0.0.1:8787/mcp", true)).toBeUndefined();
    expect(check("ftp://example.com/", true)).toMatch(/ftp: URLs are not allowed/);
    expect(isLoopbackHost("localhost")).toBe(true);
    expect(isLoopbackHost("127.0.0.1")).toBe(true);
    expect(isLoopbackHost("[::1]")).toBe(true);
    expect(isLoopbackHost("example.com")).toBe(false);
  });
});

describe("events on agents:mcp (dokit/observability installed)", () => {
  it("publishes mcp:client:preconnect, connect, discover and close for a server, and connect with its error for a failing one", async () => {
    const logs = captureConsole();
    const events: McpEvent[] = [];
    const name = fresh("events");
    const unsubscribe = subscribe("mcp", (event) => void (event.name === name && event.type.startsWith("mcp:client:") && events.push(event)));
    try {
      const stub = assistant(name);
      await stub.add("counter", serverUrl(fresh("srv")), { id: "counter", transport: { listen: false } });
      await stub.remove("counter");
      const failing = tight(name);
      await failing.add("broken", "https://mcp.test/http-error", { id: "broken", transport: { listen: false } });
    } finally {
      unsubscribe();
    }
    expect(events.map((event) => [event.agent, event.type, (event.payload as { serverId?: string }).serverId, (event.payload as { state?: string }).state])).toEqual([
      ["Assistant", "mcp:client:preconnect", "counter", undefined],
      ["Assistant", "mcp:client:connect", "counter", "connected"],
      ["Assistant", "mcp:client:discover", "counter", "ready"],
      ["Assistant", "mcp:client:close", "counter", "ready"],
      ["TightAssistant", "mcp:client:preconnect", "broken", undefined],
      ["TightAssistant", "mcp:client:connect", "broken", "failed"],
    ]);
    expect(events[2]?.payload).toMatchObject({ url: expect.stringMatching(/^https:\/\/mcp\.test\//), tools: 6, prompts: 1, resources: 1 });
    expect(events[5]?.payload).toMatchObject({ transport: "streamable-http", error: expect.stringMatching(/502|upstream|error/i) });
    await vi.waitFor(() => expect(logs.warn).toEqual([expect.stringMatching(/^dokit: MCP server broken failed: .*502/)]));
    // Never a header or a token: the server's headers are stored, not published.
    expect(JSON.stringify(events)).not.toMatch(/x-api-key|authorization|token/i);
  });
});

describe("bad input", () => {
  it("refuses URLs the policy does not allow, before fetching", async () => {
    const stub = assistant(fresh("policy"));
    expect((await stub.addError("x", "http://mcp.test/agents/mcp-server/a/mcp"))?.message).toMatch(/only https/);
    expect((await stub.addError("x", "https://127.0.0.1/mcp"))?.message).toMatch(/private and loopback/);
    expect((await stub.addError("x", "https://[::1]/mcp"))?.message).toMatch(/private and loopback/);
    expect((await stub.addError("x", "https://10.1.2.3/mcp"))?.message).toMatch(/private and loopback/);
    expect((await stub.addError("x", "https://localhost/mcp"))?.message).toMatch(/private and loopback/);
    expect((await stub.addError("x", "file:///etc/passwd"))?.message).toMatch(/not allowed/);
    expect((await stub.addError("x", "not a url"))?.message).toMatch(/is not a URL/);
    expect((await stub.addError("x", serverUrl("a"), { id: "bad id!" }))?.message).toMatch(/id must be/);
    expect(await stub.servers()).toEqual([]);
  });

  it("refuses a streamIdleMs that is not a number of milliseconds >= 0 (Infinity and 0 are accepted)", () => {
    for (const streamIdleMs of [-1, Number.NaN, "30000" as unknown as number]) {
      let thrown: unknown;
      try {
        new McpClients({ name: "idle", version: "1.0.0", streamIdleMs });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: "INVALID_ARGUMENT", message: "dokit: McpClients: streamIdleMs must be a number of milliseconds >= 0, or Infinity" });
    }
    expect(new McpClients({ name: "idle", version: "1.0.0", streamIdleMs: Number.POSITIVE_INFINITY })).toBeInstanceOf(McpClients);
    expect(new McpClients({ name: "idle", version: "1.0.0", streamIdleMs: 0 }).keepsAwake()).toEqual([]);
  });

  it("follows allowUrl instead of the default policy when it is given", async () => {
    const stub = tight(fresh("allow"));
    expect((await stub.addError("x", "https://example.com/mcp"))?.message).toMatch(/refused by allowUrl/);
    // http to a .test host: refused by the default policy, allowed by this one (and then fetched).
    const logs = captureConsole();
    const result = await stub.add("http", "http://mcp.test/http-error", { id: "http" });
    expect(result).toMatchObject({ state: "failed", error: expect.stringMatching(/502|upstream|error/i) });
    await vi.waitFor(() => expect(logs.warn).toEqual([expect.stringMatching(/^dokit: MCP server http failed: .*502/)]));
  });

  it("ends in failed with a message for an unreachable URL, HTTP errors, garbage and a hang; other servers keep working", async () => {
    // Each failing server is logged once (console.error); captured here so the run stays quiet.
    const logs = captureConsole();
    const stub = tight(fresh("bad"));
    const good = await stub.add("good", serverUrl(fresh("srv")), { id: "good", transport: { listen: false } });
    // The good server offers 6 tools; the tight object keeps at most 2 per server.
    expect(good.state).toBe("failed");
    expect(good.error).toMatch(/6 tools, more than the 2 allowed/);

    const cases: [string, string, RegExp][] = [
      ["unreachable", "https://unreachable.test/mcp", /Network connection lost/],
      ["http-error", "https://mcp.test/http-error", /502|upstream|error/i],
      ["garbage", "https://mcp.test/garbage", /./],
      ["garbage-json", "https://mcp.test/garbage-json", /./],
      ["hang", "https://mcp.test/hang", /timed out after 500 ms/],
      ["huge-body", "https://mcp.test/huge-body", /more than the 1048576 allowed/],
      ["redirect-private", "https://mcp.test/redirect-private", /redirect of https:\/\/mcp\.test to https:\/\/10\.0\.0\.1 is not allowed/],
      ["redirect-loop", "https://mcp.test/redirect-loop", /more than 5 redirects/],
    ];
    const results = await Promise.all(cases.map(([id, url]) => stub.add(id, url, { id, transport: { listen: false } })));
    results.forEach((result: { error?: string }, i: number) => {
      const [id, , pattern] = cases[i] as [string, string, RegExp];
      expect(result, id).toMatchObject({ id, state: "failed" });
      expect(result.error, id).toMatch(pattern);
      expect(result.error, id).not.toMatch(/\n\s+at /); // never a stack
    });
    const state = await stub.state();
    for (const [id] of cases) expect(state.servers[id]?.state).toBe("failed");
    expect(await stub.callToolError("garbage", "get")).toMatchObject({ code: "SERVER_UNAVAILABLE" });
  });
});

describe("the stored record limit", () => {
  it("refuses up front a server whose record would pass the limit, naming it; nothing is stored and the object keeps working", async () => {
    const stub = assistant(fresh("record"));
    for (const size of [3 * 1024 * 1024, 1024 * 1024 + 1]) {
      const refused = await stub.addError("big", serverUrl("big"), { id: "big", headers: { "x-big": "x".repeat(size) } });
      expect(refused).toMatchObject({ code: "RECORD_TOO_LARGE", message: expect.stringMatching(/more than the 1048576 allowed .*Nothing was stored/) });
    }
    // A name of multi-byte characters is measured in UTF-8 bytes.
    expect(await stub.addError("é".repeat(600_000), serverUrl("big"), { id: "wide" })).toMatchObject({ code: "RECORD_TOO_LARGE" });
    expect(await stub.servers()).toEqual([]);
    expect(await stub.tableExists()).toBe(false);
    expect(await stub.add("small", serverUrl(fresh("srv")), { id: "small", transport: { listen: false }, headers: { "x-api-key": "k" } })).toEqual({ id: "small", state: "ready" });
  });
});

describe("OAuth against @cloudflare/workers-oauth-provider", () => {
  const oauth = (name: string) => env.OAUTH_ASSISTANT.get(env.OAUTH_ASSISTANT.idFromName(name)) as unknown as Api;
  /** Fetches like a browser that does not follow redirects itself: returns the Location. */
  const visit = async (url: string) => {
    const response = await worker.fetch(new Request(url, { redirect: "manual" }));
    return { status: response.status, location: response.headers.get("location"), body: await response.text() };
  };

  /** Adds a protected server through a routed request (so the OAuth callback URL is known). */
  async function addProtected(name: string, id: string, url = `https://mcp.test/protected/${fresh("srv")}/mcp`, binding = "oauth-assistant") {
    const response = await worker.fetch(
      new Request(`https://app.test/agents/${binding}/${name}/add`, { method: "POST", body: JSON.stringify({ name: "protected", url, id }) }),
    );
    return (await response.json()) as { id: string; state: string; authUrl: string; error?: string };
  }

  it("authenticates, completes the flow through the callback, survives eviction, refreshes, and refuses a replayed or forged state", async () => {
    const name = fresh("oauth");
    const added = await addProtected(name, "p");
    expect(added, JSON.stringify(added)).toMatchObject({ id: "p", state: "authenticating" });
    const authUrl = new URL(added.authUrl as string);
    expect(authUrl.origin + authUrl.pathname).toBe("https://mcp.test/authorize");
    const state = authUrl.searchParams.get("state") as string;
    expect(state.length).toBeGreaterThanOrEqual(40);
    expect(authUrl.searchParams.get("code_challenge_method")).toBe("S256");
    const stub = oauth(name);
    expect((await stub.state()).servers.p).toMatchObject({ state: "authenticating", auth_url: authUrl.href });

    // A forged state is refused and changes nothing.
    const forged = await visit(`https://app.test/agents/oauth-assistant/${name}/mcp-client/callback?code=x&state=forged`);
    expect(forged.status).toBe(400);
    expect((await stub.state()).servers.p?.state).toBe("authenticating");

    // The browser: the authorization server approves and redirects to the object's callback.
    const consent = await visit(authUrl.href);
    expect(consent.status, consent.body).toBe(302);
    const callback = new URL(consent.location as string);
    expect(callback.pathname).toBe(`/agents/oauth-assistant/${name}/mcp-client/callback`);
    expect(callback.searchParams.get("state")).toBe(state);
    await evictDurableObject(stub); // the flow's data (verifier, state, registration) is in storage
    const done = await visit(callback.href);
    expect(done.status, JSON.stringify((await stub.state()).servers.p)).toBe(302);
    expect(done.location).toBe("https://app.test/done?serverId=p");
    const ready = await stub.state();
    expect(ready.servers.p).toMatchObject({ state: "ready", auth_url: null, error: null });
    expect(JSON.stringify(ready)).not.toMatch(/access_token|refresh_token|code_verifier/);
    expect(textOf(await stub.callTool("p", "add", { a: 4 }))).toBe("total 4");

    // Replaying the same callback is refused: the state was single-use.
    const replay = await visit(callback.href);
    expect(replay.status).toBe(400);

    // Tokens survive eviction; a rejected (expired) access token is refreshed with the refresh token.
    const logs = captureConsole();
    await evictDurableObject(stub);
    const old = await stub.spoilAccessToken();
    expect(textOf(await stub.callTool("p", "get"))).toBe("total 4");
    const renewed = await stub.accessToken();
    expect(renewed).not.toBe("expired");
    expect(renewed).not.toBe(old);
    // The provider logs the refused token.
    expect(logs.error.concat(logs.warn, logs.info).join("\n")).toMatch(/401 invalid_token/);
    expect((await stub.storedRows())[0]).toMatchObject({ id: "p", has_tokens: 1 });
  });

  /** Adds a protected server through a routed request. @returns the add() result */
  it("fails the server when the user denies, and refuses the state afterwards", async () => {
    const name = fresh("deny");
    const added = await addProtected(name, "d");
    expect(added.state).toBe("authenticating");
    const state = new URL(added.authUrl).searchParams.get("state") as string;
    const callback = `https://app.test/agents/oauth-assistant/${name}/mcp-client/callback?error=access_denied&state=${state}`;
    expect((await visit(callback)).status).toBe(400);
    expect((await oauth(name).state()).servers.d).toMatchObject({ state: "failed", auth_url: null, error: "authorization refused: access_denied" });
    expect((await visit(callback)).status).toBe(400); // single use
  });

  it("sends the browser to errorRedirect with the server id and the reason when the user denies", async () => {
    const name = fresh("deny-redirect");
    const added = await addProtected(name, "r", undefined, "redirecting-assistant");
    expect(added.state).toBe("authenticating");
    const state = new URL(added.authUrl).searchParams.get("state") as string;
    const denied = await visit(`https://app.test/agents/redirecting-assistant/${name}/mcp-client/callback?error=access_denied&state=${state}`);
    expect(denied.status).toBe(302);
    const location = new URL(denied.location as string);
    expect(location.origin + location.pathname).toBe("https://app.test/not-connected");
    expect(Object.fromEntries(location.searchParams)).toEqual({ serverId: "r", error: "authorization refused: access_denied" });
  });

  it("refuses an expired state; add() again starts a new authorization, which completes", async () => {
    const name = fresh("expired");
    const url = `https://mcp.test/protected/${fresh("srv")}/mcp`;
    const added = await addProtected(name, "x", url);
    // While the authorization is pending, add() again answers the same URL (no second flow).
    expect((await addProtected(name, "x", url)).authUrl).toBe(added.authUrl);
    const consent = await visit(added.authUrl);
    await oauth(name).expireStates();
    const done = await visit(consent.location as string);
    expect(done.status).toBe(400);
    expect(done.body).toContain("Authorization failed");
    expect((await oauth(name).state()).servers.x?.state).toBe("authenticating");
    const again = await addProtected(name, "x", url);
    expect(again.state).toBe("authenticating");
    expect(again.authUrl).not.toBe(added.authUrl);
    const second = await visit(again.authUrl);
    expect((await visit(second.location as string)).status).toBe(302);
    expect((await oauth(name).state()).servers.x?.state).toBe("ready");
  });
});
