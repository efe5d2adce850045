// Every refusal dokit itself answers to a WebSocket upgrade, as real clients see
// it over loopback: Node's WebSocket reads the close code and reason (as a
// browser's does; neither ever sees an HTTP error body), dokit's client stops
// reconnecting and reports the reason, the official client sees the close.
// Requests that are not upgrades keep their HTTP answers, and a refusal the
// user's own Worker returns is passed through untouched.
import { AgentClient as OfficialClient } from "agents/client";
import { afterEach, describe, expect, inject, it } from "vitest";
import { AgentClient } from "../src/client";
import { createSnapshotStore } from "../src/react/snapshot";

const base = new URL(inject("workerUrl"));
const cleanup: Array<() => void> = [];
let serial = 0;
afterEach(() => {
  for (const close of cleanup.splice(0)) close();
});
const fresh = (label: string) => `${label}-${++serial}-${Date.now()}`;
/** How long a client is watched for further connection attempts after a refusal. */
const WATCH_MS = 1500;
const LONG_ID = "a".repeat(300);

interface Refusal {
  /** What is refused. */
  what: string;
  /** The binding (as the client names it), the query, and the connection id / transport the client uses. */
  agent: string;
  query?: Record<string, string>;
  id?: string;
  transport?: "capnweb";
  code: number;
  reason: RegExp;
}

const refusals: Refusal[] = [
  { what: "a path that names no binding", agent: "NoSuchAgent", code: 4404, reason: /^dokit: no Durable Object binding for the path .*: "no-such-agent"$/ },
  { what: "an object without WebSockets installed", agent: "RefusalNoSockets", code: 4501, reason: /^dokit: this object has no WebSockets: Lifecycle\.install\(this\)\.use\(webSockets\) \(building one is not enough\)$/ },
  { what: "a connection id over 252 characters", agent: "PlainRoom", id: LONG_ID, code: 4400, reason: /^dokit: connection id \(_pk\) over 252 characters$/ },
  { what: "a Cap'n Web connection id over 252 characters", agent: "DokitAgent", id: LONG_ID, transport: "capnweb", code: 4400, reason: /^dokit: connection id \(_pk\) over 252 characters$/ },
  { what: "Cap'n Web on an object without the transport", agent: "PlainRoom", transport: "capnweb", code: 4505, reason: /^dokit: Cap'n Web not enabled: new WebSockets\(\{ \.\.\., capnweb \}\)/ },
  { what: "an onConnect that throws", agent: "FaultyHost", query: { fail: "1" }, code: 4500, reason: /^dokit: internal error while opening the connection/ },
  { what: "an object that fails to start", agent: "RefusalStartFails", code: 4500, reason: /^dokit: internal error while opening the connection/ },
];

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`).slice(1);

/** @returns the ws: URL of an upgrade to `refusal`'s object */
function upgradeUrl(refusal: Refusal, name: string, prefix = "agents"): string {
  const url = new URL(`/${prefix}/${kebab(refusal.agent)}/${name}`, base);
  url.protocol = "ws:";
  for (const [key, value] of Object.entries(refusal.query ?? {})) url.searchParams.set(key, value);
  if (refusal.id) url.searchParams.set("_pk", refusal.id);
  if (refusal.transport) url.searchParams.set("__agents_transport", refusal.transport);
  return url.href;
}

/** @returns the close a raw WebSocket gets, or rejects when none comes within 5 s */
function rawClose(url: string): Promise<{ code: number; reason: string }> {
  const ws = new WebSocket(url);
  cleanup.push(() => ws.readyState < 2 && ws.close());
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no close within 5000 ms (readyState ${ws.readyState})`)), 5000);
    ws.addEventListener("close", (event) => {
      clearTimeout(timer);
      resolve({ code: event.code, reason: event.reason });
    });
  });
}

/** Waits, then reports what a client saw meanwhile. */
const watch = () => new Promise((resolve) => setTimeout(resolve, WATCH_MS));

describe.each(refusals)("refusing $what", (refusal) => {
  it(`reaches a raw WebSocket as a ${refusal.code} close whose reason names the problem`, async () => {
    const closed = await rawClose(upgradeUrl(refusal, fresh("raw")));
    expect(closed.code).toBe(refusal.code);
    expect(closed.reason).toMatch(refusal.reason);
    expect(new TextEncoder().encode(closed.reason).byteLength).toBeLessThanOrEqual(123);
    expect(closed.reason).not.toMatch(/secret|exploded|\n\s+at /);
  });

  it("ends dokit's client: one close, no further attempt, the reason through onConnectionError", async () => {
    const closes: number[] = [];
    const errors: Array<Error & { code: number }> = [];
    let opens = 0;
    const client = new AgentClient({
      host: base.host,
      agent: refusal.agent,
      name: fresh("dokit-client"),
      ...(refusal.query && { query: refusal.query }),
      ...(refusal.id && { id: refusal.id }),
      ...(refusal.transport && { transport: refusal.transport }),
      minReconnectionDelay: 50,
      maxReconnectionDelay: 100,
      onConnectionError: (error) => errors.push(error),
    });
    cleanup.push(() => client.close());
    client.addEventListener("open", () => opens++);
    client.addEventListener("close", (event) => closes.push((event as CloseEvent).code));
    await watch();
    expect(closes).toEqual([refusal.code]);
    expect(opens).toBeLessThanOrEqual(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.code).toBe(refusal.code);
    expect(errors[0]!.message).toMatch(refusal.reason);
    expect(client.connectionError).toBe(errors[0]);
    await expect(client.call("anything")).rejects.toThrow("Connection closed");
  });
});

describe("the official client", () => {
  it("sees a refusal as its close code and does not reconnect", async () => {
    const refusal = refusals.find((r) => r.code === 4501)!;
    const closes: Array<{ code: number; reason: string }> = [];
    let opens = 0;
    const client = new OfficialClient({
      host: base.host,
      agent: refusal.agent,
      name: fresh("official-client"),
      minReconnectionDelay: 50,
      maxReconnectionDelay: 100,
    } as never);
    cleanup.push(() => client.close());
    client.addEventListener("open", () => opens++);
    client.addEventListener("close", (event) => closes.push({ code: (event as CloseEvent).code, reason: (event as CloseEvent).reason }));
    await watch();
    expect(closes).toHaveLength(1);
    expect(closes[0]!.code).toBe(4501);
    expect(closes[0]!.reason).toMatch(refusal.reason);
    expect(opens).toBeLessThanOrEqual(1);
  });
});

describe("dokit/react", () => {
  it("exposes the refusal as connectionError, the value useAgent returns", async () => {
    const client = new AgentClient({ host: base.host, agent: "RefusalNoSockets", name: fresh("react"), startClosed: true });
    cleanup.push(() => client.close());
    const store = createSnapshotStore(client);
    let renders = 0;
    const unsubscribe = store.subscribe(() => renders++);
    cleanup.push(unsubscribe);
    client.reconnect(); // what useAgent's effect does on mount
    await expect.poll(() => store.get().connectionError, { timeout: 5000 }).not.toBeNull();
    expect(store.get().connectionError).toMatchObject({ code: 4501, message: expect.stringMatching(/^dokit: this object has no WebSockets/) });
    expect(renders).toBeGreaterThan(0);
  });
});

describe("what dokit leaves as it is", () => {
  it("answers requests that are not upgrades over HTTP, as before", async () => {
    const noBinding = await fetch(new URL(`/agents/no-such-agent/${fresh("http")}`, base));
    expect(noBinding.status).toBe(400);
    expect(await noBinding.text()).toMatch(/^Invalid request: no Durable Object binding is named "no-such-agent"/);
    const noSockets = await fetch(new URL(`/agents/refusal-no-sockets/${fresh("http")}`, base));
    expect(noSockets.status).toBe(404);
    const startFails = await fetch(new URL(`/agents/refusal-start-fails/${fresh("http")}`, base));
    expect(startFails.status).toBe(500);
    expect(await startFails.text()).toBe("Internal error");
  });

  it("passes a refusal of the user's own Worker through: no dokit close code", async () => {
    const refusal: Refusal = { what: "", agent: "PlainRoom", code: 0, reason: /.^/ };
    const closed = await rawClose(upgradeUrl(refusal, fresh("user"), "user-refusal"));
    // A 401 answer to an upgrade: Node's WebSocket (as a browser's) reports only a failed connection.
    expect(closed.code).toBe(1006);
  });
});
