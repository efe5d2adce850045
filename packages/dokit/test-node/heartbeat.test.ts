// dokit's client heartbeat over real loopback: a TCP proxy between the client and the
// worker can be frozen (it stops forwarding bytes both ways, the sockets stay open), which
// is what a dead link looks like to both ends.
import { createConnection, createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { describe, expect, inject, it, onTestFinished } from "vitest";
import { AgentClient as OfficialClient } from "agents/client";
import { AgentClient } from "../src/client";
import { eventually, fresh, sleep } from "./helpers";

/** A TCP proxy to the worker whose open connections can be frozen; new connections pass. */
async function freezableProxy(): Promise<{ host: string; freeze(): void; connections(): number }> {
  const target = new URL(inject("workerUrl"));
  const pairs: { frozen: boolean }[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const pair = { frozen: false };
    pairs.push(pair);
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => sockets.delete(socket));
    }
    client.on("data", (chunk) => pair.frozen || upstream.write(chunk));
    upstream.on("data", (chunk) => pair.frozen || client.write(chunk));
    client.on("close", () => pair.frozen || upstream.destroy());
    upstream.on("close", () => pair.frozen || client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onTestFinished(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    freeze: () => {
      for (const pair of pairs) pair.frozen = true;
    },
    connections: () => pairs.length,
  };
}

/** An AgentClient of a fresh HeartbeatRoom through `host`, recording its events; closed when the test ends. */
function client(host: string, options: Partial<ConstructorParameters<typeof AgentClient>[0]> = {}) {
  const events: string[] = [];
  const agent = new AgentClient({
    agent: "HeartbeatRoom",
    name: fresh("heartbeat"),
    host,
    minReconnectionDelay: 100,
    maxReconnectionDelay: 200,
    ...options,
  });
  agent.addEventListener("open", () => events.push("open"));
  agent.addEventListener("close", (event) => events.push(`close ${(event as CloseEvent).code} ${(event as CloseEvent).reason}`));
  agent.addEventListener("message", (event) => {
    const data = (event as MessageEvent).data;
    if (typeof data === "string" && !data.startsWith("{")) events.push(`message ${data}`);
  });
  onTestFinished(() => agent.close());
  return { agent, events };
}

describe("client heartbeat", () => {
  it("keeps a live link open: pongs arrive, are no messages, and nothing is closed", async () => {
    const proxy = await freezableProxy();
    const { agent, events } = client(proxy.host, { heartbeat: { intervalMs: 200, timeoutMs: 300 } });
    await agent.ready;
    await sleep(1000);
    agent.send("hello");
    await eventually(() => expect(events).toContain("message echo:hello"));
    // About five pings went out and were answered by the runtime: no close, no pong as a message.
    expect(events).toEqual(["open", "message echo:hello"]);
    expect(proxy.connections()).toBe(1);
  });

  it("without the heartbeat, a frozen link is not noticed", async () => {
    const proxy = await freezableProxy();
    const { agent, events } = client(proxy.host);
    await agent.ready;
    proxy.freeze();
    await sleep(1200);
    expect(events).toEqual(["open"]);
  });

  it("closes a frozen link within about two intervals, reconnects, and sends what was queued while down", async () => {
    const proxy = await freezableProxy();
    const { agent, events } = client(proxy.host, { heartbeat: { intervalMs: 300, timeoutMs: 300 } });
    await agent.ready;
    proxy.freeze();
    const frozenAt = Date.now();
    await eventually(() => expect(events).toContain("close 1006 Heartbeat timed out"), { timeout: 2000 });
    expect(Date.now() - frozenAt).toBeLessThan(2 * 300 + 300 + 200);
    // Down now: the message is queued, not lost, and goes out on the next socket.
    expect(agent.send("while down")).toBe(false);
    await eventually(() => expect(events).toContain("message echo:while down"), { timeout: 3000 });
    expect(events.slice(0, 3)).toEqual(["open", "close 1006 Heartbeat timed out", "open"]);
    expect(proxy.connections()).toBe(2);
    // Sent once: a message sent after it is echoed after it, and the queued one is not echoed again.
    agent.send("after");
    await eventually(() => expect(events).toContain("message echo:after"));
    expect(events.filter((event) => event.startsWith("message "))).toEqual(["message echo:while down", "message echo:after"]);
  });

  it("bounds the queue while down: the oldest message is dropped and reported, the rest are sent", async () => {
    const proxy = await freezableProxy();
    const dropped: unknown[] = [];
    const { agent, events } = client(proxy.host, { startClosed: true, maxQueuedMessages: 2, onMessageDropped: (message) => dropped.push(message) });
    expect([agent.send("one"), agent.send("two"), agent.send("three")]).toEqual([false, false, false]);
    expect(dropped).toEqual(["one"]);
    agent.reconnect();
    await eventually(() => expect(events).toEqual(["open", "message echo:two", "message echo:three"]));
  });

  it("rejects a queued call dropped from the full queue with Send queue full", async () => {
    const proxy = await freezableProxy();
    const dropped: unknown[] = [];
    const { agent, events } = client(proxy.host, { startClosed: true, maxQueuedMessages: 1, onMessageDropped: (message) => dropped.push(message) });
    const call = agent.call("anything");
    agent.send("after the call");
    await expect(call).rejects.toThrow("Send queue full");
    expect(dropped).toEqual([]);
    agent.reconnect();
    await eventually(() => expect(events).toEqual(["open", "message echo:after the call"]));
  });

  it("drops queued messages beyond the byte bound, oldest first", async () => {
    const proxy = await freezableProxy();
    const dropped: unknown[] = [];
    const { agent, events } = client(proxy.host, { startClosed: true, maxQueuedBytes: 10, onMessageDropped: (message) => dropped.push(message) });
    agent.send("12345");
    agent.send("67890");
    agent.send("abc");
    expect(dropped).toEqual(["12345"]);
    agent.reconnect();
    await eventually(() => expect(events).toEqual(["open", "message echo:67890", "message echo:abc"]));
  });

  it("leaves the official agents client (which sends no pings) working against a heartbeat server", async () => {
    const official = new OfficialClient({ host: new URL(inject("workerUrl")).host, agent: "HeartbeatRoom", name: fresh("heartbeat-official") } as never);
    onTestFinished(() => official.close());
    const texts: string[] = [];
    official.addEventListener("message", (event) => texts.push(String((event as MessageEvent).data)));
    await official.ready;
    official.send("plain");
    await eventually(() => expect(texts).toContain("echo:plain"));
    expect(JSON.parse(texts[0] as string)).toMatchObject({ type: "cf_agent_identity", agent: "heartbeat-room" });
  });
});

describe("server heartbeat sweep", () => {
  it("closes a socket whose pings stopped with 3008, as a real client sees it, and keeps one that never pinged", async () => {
    const base = new URL(inject("workerUrl"));
    const name = fresh("heartbeat-swept");
    const socket = (query = "") => new WebSocket(`ws://${base.host}/agents/heartbeat-swept-room/${name}${query}`);
    const stale = socket();
    const silent = socket("?_pk=silent");
    onTestFinished(() => {
      stale.close();
      silent.close();
    });
    const pong = new Promise((resolve) => stale.addEventListener("message", (event) => event.data === "dokit:pong" && resolve(event.data)));
    const closed = new Promise<{ code: number; reason: string }>((resolve) => stale.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason })));
    await new Promise((resolve) => stale.addEventListener("open", resolve));
    stale.send("dokit:ping");
    expect(await pong).toBe("dokit:pong");
    const pingedAt = Date.now();
    const outcome = await Promise.race([closed, sleep(4000).then(() => "no close event")]);
    expect(outcome).toEqual({ code: 3008, reason: "dokit: no ping within 1000 ms" });
    expect(Date.now() - pingedAt).toBeLessThan(3000);
    const echoed = new Promise((resolve) => silent.addEventListener("message", (event) => String(event.data).startsWith("echo:") && resolve(event.data)));
    expect(silent.readyState).toBe(WebSocket.OPEN);
    silent.send("still here");
    expect(await echoed).toBe("echo:still here");
  });
});
