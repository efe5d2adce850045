// McpClients' defences over real loopback sockets: redirects that would carry
// credentials to another origin, cross-site pages driving a local object, the
// URL policy through add(), and who is shown a pending authorization URL.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { MCPServersState } from "../src/protocol";
import { fresh } from "./helpers";

const base = new URL(inject("workerUrl"));

// ------------------------------------------------------------ Node servers

type Seen = { method: string; path: string; headers: IncomingMessage["headers"] };
type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>;
const servers: Server[] = [];

/** Starts a Node HTTP server on loopback (a port of its own: an origin of its own) that records every request. */
async function serve(handle: Handler): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    seen.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers });
    await handle(req, res, body);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** A real MCP server (the official server SDK), one tool. */
const mcp = createMcpHandler(() => {
  const server = new McpServer({ name: "node-server", version: "1.0.0" });
  server.registerTool("ping", { description: "Answers pong" }, async () => ({ content: [{ type: "text" as const, text: "pong" }] }));
  return server;
});

/** Hands a Node request to the MCP handler (fetch style). */
async function answerMcp(req: IncomingMessage, res: ServerResponse, body: string): Promise<void> {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(key, value);
  const request = new Request(`http://${req.headers.host}/mcp`, { method: req.method, headers, ...(body && req.method !== "GET" && { body }) });
  const response = await mcp.fetch(request);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body) for await (const chunk of response.body) res.write(chunk);
  res.end();
}

/** What the metadata stand-in answers: short enough that a JSON parse error would quote it whole. */
const SECRET = "AKIA7F3A";

afterAll(async () => {
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

// ------------------------------------------------------------ the objects

async function act(agent: string, name: string, action: string, body?: unknown): Promise<any> {
  const url = new URL(`agents/${agent}/${name}/${action}`, base);
  const response = await fetch(url, body === undefined ? {} : { method: "POST", body: JSON.stringify(body) });
  return response.json();
}

/** A WebSocket to an object, opened with the given upgrade headers (as a browser sends them), collecting its frames. */
async function open(agent: string, name: string, headers: Record<string, string> = {}, query = "") {
  const url = new URL(`agents/${agent}/${name}${query}`, base);
  url.protocol = "ws:";
  // Node's WebSocket (undici) sends extra upgrade headers: here the Origin a browser would send.
  const socket = new WebSocket(url.href, { headers } as unknown as string[]);
  const frames: any[] = [];
  const waiters: (() => void)[] = [];
  socket.addEventListener("message", (event) => {
    frames.push(JSON.parse(String(event.data)));
    for (const wake of waiters.splice(0)) wake();
  });
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve);
    socket.addEventListener("error", reject);
  });
  /** @returns the first frame (from the start) that matches, waiting for it */
  const next = async (match: (frame: any) => boolean, ms = 5_000): Promise<any> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = frames.find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching frame; got ${JSON.stringify(frames).slice(0, 500)}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  };
  let ids = 0;
  const call = async (method: string, args: unknown[]) => {
    const id = `call-${ids++}`;
    socket.send(JSON.stringify({ type: "rpc", id, method, args }));
    return next((frame) => frame.type === "rpc" && frame.id === id && frame.done !== false, 10_000);
  };
  return { socket, frames, next, call };
}

// --------------------------------------------------------------- redirects

describe("redirects", () => {
  it("never sends credentials to another origin: a cross-origin redirect is refused, and the other origin receives nothing", async () => {
    const other = await serve((_req, res) => void res.writeHead(200, { "content-type": "application/json" }).end("{}"));
    const first = await serve((_req, res) => void res.writeHead(307, { location: `${other.url}/mcp` }).end());
    const added = await act("mcp-client-guarded", fresh("redirect"), "add", {
      name: "redirecting",
      url: `${first.url}/mcp`,
      id: "r",
      headers: { authorization: "Bearer user-secret", "x-api-key": "api-key-secret" },
    });
    // The first origin was asked with the credentials (it is the server the user added).
    expect(first.seen[0]?.headers.authorization).toBe("Bearer user-secret");
    // The second origin never sees them: not the Authorization, not the user's headers.
    expect(other.seen.map((request) => [request.headers.authorization, request.headers["x-api-key"]])).toEqual([]);
    expect(added).toMatchObject({ id: "r", state: "failed", error: expect.stringMatching(/redirects to another origin are not followed/) });
  });

  it("follows a redirect within the origin, with the headers", async () => {
    const server = await serve((req, res, body) => {
      if (req.url === "/old") return void res.writeHead(308, { location: "/mcp" }).end();
      return answerMcp(req, res, body);
    });
    const added = await act("mcp-client-guarded", fresh("same-origin"), "add", { name: "moved", url: `${server.url}/old`, id: "m", headers: { "x-api-key": "k" } });
    expect(added).toEqual({ id: "m", state: "ready" });
    expect(server.seen.filter((request) => request.path === "/mcp").every((request) => request.headers["x-api-key"] === "k")).toBe(true);
  });
});

// ------------------------------------------------------ cross-site pages

describe("cross-site pages and local development", () => {
  let metadata: { url: string; seen: Seen[] };
  beforeAll(async () => {
    // Stands in for an instance metadata service on a private address: its body is the secret.
    metadata = await serve((req, res) => {
      const status = req.url?.startsWith("/error") ? 500 : 200;
      res.writeHead(status, { "content-type": status === 200 ? "application/json" : "text/plain" }).end(SECRET);
    });
  });

  it.each([
    ["a page on another site", { origin: "https://evil.example" }],
    ["a page on another port of the same host", { origin: `http://${base.hostname}:1` }],
    ["a sandboxed page (Origin: null)", { origin: "null" }],
  ])("does not treat a WebSocket from %s to localhost as local development: loopback targets are refused, never fetched", async (_label, headers) => {
    const before = metadata.seen.length;
    const page = await open("mcp-client-guarded", fresh("cross-site"), headers);
    try {
      const reply = await page.call("add", ["metadata", `${metadata.url}/latest/meta-data/`]);
      expect(reply).toMatchObject({ type: "rpc", success: false, error: expect.stringMatching(/is not allowed: only https URLs are allowed outside local development/) });
      expect(metadata.seen.length).toBe(before);
      expect(JSON.stringify(page.frames)).not.toContain(SECRET);
    } finally {
      page.socket.close();
    }
  });

  it("treats a WebSocket from a page on the same loopback host as local development, and never returns a fetched body in an error", async () => {
    const page = await open("mcp-client-guarded", fresh("same-site"), { origin: base.origin });
    try {
      const garbage = await page.call("add", ["garbage", `${metadata.url}/latest/meta-data/`, { id: "garbage", transport: { listen: false } }]);
      const failing = await page.call("add", ["failing", `${metadata.url}/error`, { id: "failing", transport: { listen: false } }]);
      expect(garbage).toMatchObject({ success: true, result: { id: "garbage", state: "failed" } });
      expect(garbage.result.error).not.toContain(SECRET);
      expect(failing).toMatchObject({ success: true, result: { id: "failing", state: "failed", error: expect.stringMatching(/answered HTTP 500/) } });
      const state = await page.next((frame) => frame.type === "cf_agent_mcp_servers" && frame.mcp.servers.failing?.state === "failed");
      expect(JSON.stringify([garbage, failing, state, page.frames])).not.toContain(SECRET);
    } finally {
      page.socket.close();
    }
  });

  it.each([
    ["Origin", { origin: "https://evil.example" }],
    ["Sec-Fetch-Site", { "sec-fetch-site": "cross-site" }],
  ])("does not treat an HTTP request from a page on another site (%s) as local development", async (_label, headers) => {
    const before = metadata.seen.length;
    const response = await fetch(new URL(`agents/mcp-client-guarded/${fresh("http-cross")}/add`, base), {
      method: "POST",
      headers,
      body: JSON.stringify({ name: "metadata", url: `${metadata.url}/latest/meta-data/` }),
    });
    expect(await response.json()).toMatchObject({ code: "URL_NOT_ALLOWED" });
    expect(metadata.seen.length).toBe(before);
  });
});

// ------------------------------------------------------------- URL policy

describe("the URL policy through add()", () => {
  it.each([
    "https://[::7f00:1]/mcp", // IPv4-compatible loopback
    "https://[::a9fe:a9fe]/mcp", // IPv4-compatible link-local (metadata)
    "https://[64:ff9b::a9fe:a9fe]/mcp", // NAT64 of 169.254.169.254
    "https://[2002:a9fe:a9fe::]/mcp", // 6to4 of 169.254.169.254
    "https://[2001::1]/mcp", // Teredo
    "https://[fec0::1]/mcp", // site-local
    "https://198.18.0.1/mcp", // benchmarking
    "https://192.0.0.170/mcp", // IETF protocol assignments
    "https://[::ffff:7f00:1]/mcp", // IPv4-mapped loopback
  ])("refuses %s outside local development, before fetching", async (url) => {
    const result = await act("mcp-deployed", fresh("policy"), "add", { name: "x", url });
    expect(result).toMatchObject({ code: "URL_NOT_ALLOWED" });
  });

  it("refuses the loopback MCP server outside local development, and it is never asked", async () => {
    const server = await serve(answerMcp);
    const result = await act("mcp-deployed", fresh("policy-loopback"), "add", { name: "x", url: `${server.url.replace("http:", "https:")}/mcp` });
    expect(result).toMatchObject({ code: "URL_NOT_ALLOWED" });
    expect(server.seen).toEqual([]);
  });
});

// ------------------------------------------------- pending authorizations

describe("pending authorization URLs in cf_agent_mcp_servers", () => {
  /** A protected MCP server with its own authorization server: discovery and dynamic registration, no consent step needed here. */
  async function protectedServer(registration: (body: string) => unknown = (body) => ({ ...JSON.parse(body), client_id: "client-1" })) {
    const server = await serve((req, res, body) => {
      const origin = `http://${req.headers.host}`;
      const json = (status: number, value: unknown) => void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
      if (req.url?.startsWith("/.well-known/oauth-protected-resource")) return json(200, { resource: `${origin}/mcp`, authorization_servers: [origin] });
      if (req.url?.startsWith("/.well-known/oauth-authorization-server")) {
        return json(200, {
          issuer: origin,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/token`,
          registration_endpoint: `${origin}/register`,
          response_types_supported: ["code"],
          code_challenge_methods_supported: ["S256"],
        });
      }
      if (req.url === "/register") return json(201, registration(body));
      if (req.url === "/mcp") {
        return void res.writeHead(401, { "www-authenticate": `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource"` }).end();
      }
      json(404, {});
    });
    return server;
  }

  it("shows the auth_url only to connections that may authorize; a readonly viewer sees the server authenticating with auth_url null", async () => {
    const server = await protectedServer();
    const name = fresh("auth");
    const owner = await open("mcp-client-guarded", name);
    const viewer = await open("mcp-client-guarded", name, {}, "?mode=view");
    try {
      const reply = await owner.call("add", ["protected", `${server.url}/mcp`, { id: "p", transport: { listen: false } }]);
      expect(reply).toMatchObject({ success: true, result: { id: "p", state: "authenticating", authUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/authorize\?.*state=/) } });
      const authUrl = reply.result.authUrl as string;
      const pending = (frame: any) => frame.type === "cf_agent_mcp_servers" && frame.mcp.servers.p?.state === "authenticating";
      const shown = (await owner.next(pending)).mcp as MCPServersState;
      const hidden = (await viewer.next(pending)).mcp as MCPServersState;
      expect(shown.servers.p?.auth_url).toBe(authUrl);
      expect(hidden.servers.p).toMatchObject({ name: "protected", state: "authenticating", auth_url: null });
      const state = new URL(authUrl).searchParams.get("state") as string;
      expect(JSON.stringify(viewer.frames)).not.toContain(state);

      // Connections opened later: the same choice in their connect sequence.
      const lateViewer = await open("mcp-client-guarded", name, {}, "?mode=view");
      const lateOwner = await open("mcp-client-guarded", name);
      try {
        expect(((await lateViewer.next(pending)).mcp as MCPServersState).servers.p?.auth_url).toBeNull();
        expect(((await lateOwner.next(pending)).mcp as MCPServersState).servers.p?.auth_url).toBe(authUrl);
      } finally {
        lateViewer.socket.close();
        lateOwner.socket.close();
      }
    } finally {
      owner.socket.close();
      viewer.socket.close();
    }
  });

  it("fails a server whose OAuth data would pass the stored record limit, naming it, and keeps its record as it was", async () => {
    // A hostile authorization server: a registration of 1.5 MB.
    const server = await protectedServer((body) => ({ ...JSON.parse(body), client_id: "client-1", client_name: "x".repeat(1_500_000) }));
    const name = fresh("oauth-big");
    const added = await act("mcp-client-guarded", name, "add", { name: "big", url: `${server.url}/mcp`, id: "big" });
    expect(added).toMatchObject({ id: "big", state: "failed", error: expect.stringMatching(/RECORD_TOO_LARGE|more than the 1048576 allowed/) });
    const state = (await act("mcp-client-guarded", name, "state")) as MCPServersState;
    expect(state.servers.big).toMatchObject({ name: "big", state: "failed", auth_url: null });
  });
});

describe("the upgrade's Origin", () => {
  it("accepts a connection with an oversized Origin, and treats it as another site", async () => {
    const page = await open("mcp-client-guarded", fresh("long-origin"), { origin: `${base.origin}${"/x".repeat(10_000)}` });
    try {
      const reply = await page.call("add", ["loopback", `${base.origin}/mcp`]);
      expect(reply).toMatchObject({ type: "rpc", success: false, error: expect.stringMatching(/only https URLs are allowed outside local development/) });
    } finally {
      page.socket.close();
    }
  });
});
