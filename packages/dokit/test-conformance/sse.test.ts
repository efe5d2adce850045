// SSE streams over real loopback sockets: the `retry:` field on every 2025-era
// stream (modern.test.ts checks the 2026-07-28 lane), and SEP-1699 polling on a 2025-11-25 session (priming event,
// a tool that closes its stream mid-call, the resume with Last-Event-ID).
import { describe, expect, inject, it } from "vitest";
import { McpHandler } from "../src/mcp";
import { fresh } from "../test/helpers";
import { rawSessions } from "../test/mcp-raw-session";
import { type SseFrame as Frame, SseReader } from "../test/sse-reader";

const endpoint = (binding: string) => new URL(`agents/${binding}/${fresh("sse")}/mcp`, inject("conformanceUrl"));

const { open: openSession, post, get } = rawSessions(fetch);

const callTool = (name: string, id = 1) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } });
/** @returns the JSON-RPC message a frame carries, if any */
const messageOf = (frame: Frame | undefined): { id?: number; result?: { content: { text: string }[] } } | undefined =>
  frame?.data ? JSON.parse(frame.data) : undefined;

describe("SSE retry field", () => {
  it("opens 2025-era POST and GET streams with retry: 1000 by default", async () => {
    const target = endpoint("everything");
    const session = await openSession(target);
    const call = new SseReader(await post(target, session, callTool("test_simple_text")));
    const frames = await call.rest();
    expect(frames[0]).toEqual({ retry: "1000" });
    const standalone = new SseReader(await get(target, session));
    expect(await standalone.next()).toEqual({ retry: "1000" });
    await standalone.cancel();
  });

  it("sends the configured retryMs, and none with retryMs: false", async () => {
    const tuned = endpoint("retry-tuned");
    const tunedFrames = await new SseReader(await post(tuned, await openSession(tuned), callTool("test_simple_text"))).rest();
    expect(tunedFrames[0]).toEqual({ retry: "250" });
    const off = endpoint("retry-off");
    const offFrames = await new SseReader(await post(off, await openSession(off), callTool("test_simple_text"))).rest();
    expect(offFrames.some((frame) => frame.retry !== undefined)).toBe(false);
    expect(offFrames.map(messageOf).some((message) => message?.id === 1)).toBe(true);
  });
});

describe("the retryMs option", () => {
  it("must be a non-negative integer or false", () => {
    const server = () => {
      throw new Error("not called");
    };
    for (const retryMs of [-1, 1.5, Number.NaN]) {
      expect(() => new McpHandler({ server, retryMs }), String(retryMs)).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    }
    for (const retryMs of [0, 250, false] as const) expect(() => new McpHandler({ server, retryMs })).not.toThrow();
  });
});

describe("SSE polling on a 2025-11-25 session", () => {
  it("primes the stream, closes it mid-call, and delivers the result when the client resumes with Last-Event-ID", async () => {
    const target = endpoint("everything");
    const session = await openSession(target);
    const response = await post(target, session, callTool("test_reconnection", 7));
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const frames = await new SseReader(response).rest();
    // retry, then the priming event (an id and empty data), then the server closes the stream
    expect(frames[0]).toEqual({ retry: "1000" });
    expect(frames[1]).toMatchObject({ data: "" });
    expect(frames[1]?.id).toBeTruthy();
    expect(frames.map(messageOf).some((message) => message?.id === 7)).toBe(false);
    const last = frames.filter((frame) => frame.id !== undefined).at(-1)?.id;
    await new Promise((resolve) => setTimeout(resolve, 300));
    const resumed = new SseReader(await get(target, session, last));
    const again = await resumed.rest();
    expect(again[0]).toEqual({ retry: "1000" });
    const replayed = again.map(messageOf).find((message) => message?.id === 7);
    expect(replayed?.result?.content[0]?.text).toBe("Reconnection test completed successfully.");
  });
});
