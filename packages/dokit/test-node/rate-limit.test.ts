// The per-connection rate limit as real clients see it over loopback: Node's WebSocket gets the
// error frame for a dropped message and then the 4429 close; the official `agents` client treats
// the close as final and does not reconnect.
import { afterEach, describe, expect, inject, it } from "vitest";
import { AgentClient as OfficialClient } from "agents/client";
import { fresh, sleep } from "./helpers";

const base = new URL(inject("workerUrl"));
const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const close of cleanup.splice(0)) close();
});

const ERROR_FRAME = /^\{"type":"dokit_error","code":"RATE_LIMITED","error":"Too many messages","retryAfterMs":\d+\}$/;

describe("rate limit over loopback", () => {
  it("a burst over the limit gets the error frame, then the close 4429; another client is unaffected", async () => {
    const name = fresh("rate-limited");
    const url = new URL(`/agents/rate-limited-room/${name}`, base);
    url.protocol = "ws:";
    const frames: string[] = [];
    const ws = new WebSocket(url.href);
    cleanup.push(() => ws.readyState < 2 && ws.close());
    ws.addEventListener("message", (event) => frames.push(String(event.data)));
    const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason })));
    await new Promise((resolve) => ws.addEventListener("open", resolve));
    const other = new WebSocket(url.href);
    cleanup.push(() => other.readyState < 2 && other.close());
    const otherFrames: string[] = [];
    other.addEventListener("message", (event) => otherFrames.push(String(event.data)));
    await new Promise((resolve) => other.addEventListener("open", resolve));

    for (let n = 1; n <= 6; n++) ws.send(`m${n}`);
    const close = await Promise.race([closed, sleep(5000).then(() => ({ code: 0, reason: "no close within 5 s" }))]);
    expect(close).toEqual({ code: 4429, reason: "dokit: too many messages" });
    const replies = frames.filter((frame) => !frame.startsWith('{"type":"cf_agent_'));
    expect(replies.slice(0, 3)).toEqual(["echo:m1", "echo:m2", "echo:m3"]);
    expect(replies[3]).toMatch(ERROR_FRAME);
    // m5 closed the connection (the second drop in a row); m6 was never handled.
    expect(replies).toHaveLength(4);

    other.send("hello");
    await expect.poll(() => otherFrames.includes("echo:hello"), { timeout: 5000 }).toBe(true);
  });

  it("the official agents client sees the 4429 close and does not reconnect", async () => {
    const events: string[] = [];
    const agent = new OfficialClient({ agent: "RateLimitedRoom", name: fresh("rate-limited-official"), host: base.host, minReconnectionDelay: 50, maxReconnectionDelay: 100 });
    cleanup.push(() => agent.close());
    agent.addEventListener("open", () => events.push("open"));
    agent.addEventListener("close", (event) => events.push(`close ${(event as CloseEvent).code}`));
    agent.addEventListener("message", (event) => {
      const data = String((event as MessageEvent).data);
      if (!data.startsWith('{"type":"cf_agent_')) events.push(data.startsWith('{"type":"dokit_error"') ? "rate limited" : data);
    });
    await agent.ready;
    for (let n = 1; n <= 6; n++) agent.send(`m${n}`);
    await expect.poll(() => events.includes("close 4429"), { timeout: 5000 }).toBe(true);
    await sleep(500);
    expect(events).toEqual(["open", "echo:m1", "echo:m2", "echo:m3", "rate limited", "close 4429"]);
  });
});
