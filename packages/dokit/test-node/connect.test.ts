// Connect failures, closes and teardown as a real client sees them: Node's
// WebSocket, dokit's client and the official client over loopback sockets to
// the worker started by wrangler. In-process sockets (`openSocket`) see some
// closes that never reach a real client, so every claim here is made over TCP.
import { AgentClient as OfficialClient } from "agents/client";
import { afterEach, describe, expect, inject, it } from "vitest";
import { AgentClient } from "../src/client";
import { fresh } from "./helpers";

const base = new URL(inject("workerUrl"));
/**
 * A close must reach the client promptly after it is due. Alone these closes take
 * tens of milliseconds (the requirement is under a second); the bound is two seconds
 * so a loaded CI machine running every project at once does not flake. A hang,
 * the defect these tests guard against, never arrives at all.
 */
const PROMPT_MS = 2000;
const cleanup: Array<() => void> = [];

afterEach(() => {
  for (const close of cleanup.splice(0)) close();
});

const path = (kebab: string, name: string, rest = "") => `/agents/${kebab}/${name}${rest}`;

interface Closed {
  code: number;
  reason: string;
  /** Milliseconds from `since` (the open event, unless the caller resets it) to the close. */
  after: number;
}

/** A raw WebSocket that records its frames and resolves `closed` (or rejects when no close comes). */
function raw(target: string) {
  const url = new URL(target, base);
  url.protocol = "ws:";
  const ws = new WebSocket(url.href);
  const frames: string[] = [];
  let since = Date.now();
  const opened = new Promise<void>((resolve) => ws.addEventListener("open", () => ((since = Date.now()), resolve())));
  const closed = new Promise<Closed>((resolve) =>
    ws.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason, after: Date.now() - since })),
  );
  // The identity frame ends the connect sequence of these rooms (no State).
  const connected = new Promise<void>((resolve) => ws.addEventListener("message", () => resolve(), { once: true }));
  ws.addEventListener("message", (event) => frames.push(String(event.data)));
  cleanup.push(() => ws.readyState < 2 && ws.close());
  return {
    ws,
    frames,
    opened,
    /**
     * Settles once the first frame arrived. A test that closes from the client waits for it:
     * Node's WebSocket (undici) reports 1006 instead of the server's close code when a data
     * frame reaches it after it sent its Close. Against a hand-written object that closes back
     * the same way, 3 to 7 closes in 10 sent right at `open` ended so on this machine, while
     * the `ws` package saw the server's close frame every time.
     */
    connected,
    /** Resets the clock `after` is measured from. */
    mark: () => void (since = Date.now()),
    /** @returns the close, or rejects naming the readyState the socket is stuck in */
    closed: (within = 5000) =>
      Promise.race([
        closed,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`no close within ${within} ms (readyState ${ws.readyState})`)), within),
        ),
      ]),
  };
}

async function sockets(kebab: string, name: string): Promise<{ connections: number; sockets: number }> {
  const response = await fetch(new URL(path(kebab, name, "/sockets"), base));
  return response.json() as Promise<{ connections: number; sockets: number }>;
}

/** What a client reported: close events and (dokit's) final connection errors. */
function clientLog() {
  return { closes: [] as Array<{ code: number; reason: string }>, errors: [] as Array<Error & { code?: number }> };
}

describe("a connection that fails while it is being accepted", () => {
  it("reaches a raw client as a prompt 4500 without detail, and leaves no ghost behind", async () => {
    const name = fresh("faulty");
    const socket = raw(path("faulty-host", name, "?fail=1"));
    const closed = await socket.closed();
    expect(closed.code).toBe(4500);
    expect(closed.after).toBeLessThan(PROMPT_MS);
    expect(closed.reason).not.toMatch(/secret|exploded|\bat\b/);
    expect(closed.reason).toMatch(/internal error/i);
    await expect.poll(() => sockets("faulty-host", name)).toEqual({ connections: 0, sockets: 0 });

    // The object is fine: the next connection opens and stays open.
    const healthy = raw(path("faulty-host", name));
    await healthy.opened;
    await expect.poll(() => healthy.frames.map((frame) => JSON.parse(frame).type)).toEqual(["cf_agent_identity", "welcome"]);
    expect(await sockets("faulty-host", name)).toEqual({ connections: 1, sockets: 1 });
  });

  it("reaches a raw client when getConnectionTags returns an invalid tag", async () => {
    const name = fresh("badtags");
    const closed = await raw(path("faulty-host", name, "?fail=tags")).closed();
    expect(closed.code).toBe(4500);
    expect(closed.after).toBeLessThan(PROMPT_MS);
    expect(await sockets("faulty-host", name)).toEqual({ connections: 0, sockets: 0 });
  });

  it("reaches a raw client when State cannot load (a class bound without SQLite)", async () => {
    const name = fresh("nosql");
    const socket = raw(path("no-sql-host", name));
    const closed = await socket.closed();
    expect(closed.code).toBe(4500);
    expect(closed.after).toBeLessThan(PROMPT_MS);
    expect(closed.reason).not.toMatch(/SQLite|\bat\b/);
    await expect.poll(() => sockets("no-sql-host", name)).toEqual({ connections: 0, sockets: 0 });
  });

  describe.each(["faulty-host", "no-sql-host"])("on %s", (kebab) => {
    const binding = kebab === "faulty-host" ? "FaultyHost" : "NoSqlHost";

    it("is surfaced by dokit's client: a close event and onConnectionError with 4500, never a hang", async () => {
      const log = clientLog();
      const client = new AgentClient({
        host: base.host,
        agent: binding,
        name: fresh("dokit-client"),
        query: { fail: "1" },
        maxRetries: 0,
        onConnectionError: (error) => log.errors.push(error),
      });
      cleanup.push(() => client.close());
      client.addEventListener("close", (event) => log.closes.push(event as CloseEvent));
      await expect.poll(() => log.errors.length, { timeout: 5000 }).toBe(1);
      expect(log.closes.map((c) => c.code)).toEqual([4500]);
      expect(log.errors[0]).toMatchObject({ code: 4500 });
      expect(log.errors[0]!.message).toMatch(/internal error/i);
      expect(client.identified).toBe(false);
    });

    it("is surfaced by the official client as a close event with 4500", async () => {
      const log = clientLog();
      const client = new OfficialClient({
        host: base.host,
        agent: binding,
        name: fresh("official-client"),
        query: { fail: "1" },
        maxRetries: 0,
      } as never);
      cleanup.push(() => client.close());
      client.addEventListener("close", (event) => log.closes.push(event as CloseEvent));
      await expect.poll(() => log.closes.length, { timeout: 5000 }).toBeGreaterThan(0);
      expect(log.closes[0]!.code).toBe(4500);
    });
  });
});

describe("closes after the connection is open", () => {
  it("closes every client with 1001 when the object is destroyed", async () => {
    const name = fresh("destroy");
    const a = raw(path("plain-room", name));
    const b = raw(path("plain-room", name));
    await Promise.all([a.opened, b.opened]);
    a.mark();
    b.mark();
    expect(await (await fetch(new URL(path("plain-room", name, "/destroy"), base))).text()).toBe("destroyed");
    for (const socket of [a, b]) {
      const closed = await socket.closed();
      expect(closed).toMatchObject({ code: 1001, reason: "Durable Object destroyed" });
      expect(closed.after).toBeLessThan(PROMPT_MS);
    }
  });

  it("leaves the connections of other objects open when one object is destroyed", async () => {
    const bystander = raw(path("plain-room", fresh("bystander")));
    const name = fresh("doomed");
    const doomed = raw(path("plain-room", name));
    await Promise.all([bystander.opened, doomed.opened]);
    expect(await (await fetch(new URL(path("plain-room", name, "/destroy"), base))).text()).toBe("destroyed");
    expect(await doomed.closed()).toMatchObject({ code: 1001 });
    await new Promise((resolve) => setTimeout(resolve, 400)); // past the destroyed instance's reset
    expect(bystander.ws.readyState).toBe(WebSocket.OPEN);
    bystander.mark();
    bystander.ws.close(4002, "still here");
    expect(await bystander.closed()).toMatchObject({ code: 4002, reason: "still here" });
  });

  it("reciprocates a client's close with the same code and reason", async () => {
    const socket = raw(path("plain-room", fresh("client-close")));
    await socket.connected;
    socket.mark();
    socket.ws.close(4001, "bye");
    const closed = await socket.closed();
    expect(closed).toMatchObject({ code: 4001, reason: "bye" });
    expect(closed.after).toBeLessThan(PROMPT_MS);
  });

  it("completes a client's close without a code (1005)", async () => {
    const name = fresh("codeless");
    const socket = raw(path("plain-room", name));
    await socket.connected;
    socket.mark();
    socket.ws.close();
    const closed = await socket.closed();
    expect(closed.code).toBe(1005);
    expect(closed.after).toBeLessThan(PROMPT_MS);
    await expect.poll(() => sockets("plain-room", name)).toEqual({ connections: 0, sockets: 0 });
  });

  it("delivers a close the server starts while handling a message", async () => {
    const socket = raw(path("plain-room", fresh("server-close")));
    await socket.opened;
    socket.mark();
    socket.ws.send("close 4002");
    const closed = await socket.closed();
    expect(closed).toMatchObject({ code: 4002, reason: "closed by server" });
    expect(closed.after).toBeLessThan(PROMPT_MS);
  });
});
