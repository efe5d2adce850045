import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { openSocket } from "dokit/testing";

const worker = exports.default;

describe("build-log example", () => {
  it("starts a build whose log a WebSocket reader receives line by line, once each, then the end; SSE serves the finished log", async () => {
    const started = await worker.fetch("http://example.com/agents/build-log/t1/start?lines=5&everyMs=10", { method: "POST" });
    const { id } = (await started.json()) as { id: string };
    const socket = await openSocket(worker, "http://example.com/agents/build-log/t1");
    expect(await socket.nextJSON()).toMatchObject({ type: "cf_agent_identity", agent: "build-log" });
    socket.send({ type: "dokit_stream_read", stream: id });
    const seqs: number[] = [];
    for (;;) {
      const frame = await socket.nextJSON<{ type: string; chunks?: { seq: number }[]; state?: string }>();
      if (frame.type === "dokit_stream") seqs.push(...(frame.chunks ?? []).map((c) => c.seq));
      if (frame.type === "dokit_stream_end") {
        expect(frame.state).toBe("completed");
        break;
      }
    }
    expect(seqs).toEqual([0, 1, 2, 3, 4]);
    socket.ws.close(1000);
    const sse = await worker.fetch(`http://example.com/agents/build-log/t1/log/${id}`);
    const text = await sse.text();
    expect(text).toContain('id: 4\ndata: {"step":"package","text":"package: line 5 of 5"}');
    expect(text.endsWith("event: done\ndata: {}\n\n")).toBe(true);
    const latest = (await (await worker.fetch("http://example.com/agents/build-log/t1/latest")).json()) as { streamId: string; state: string; cursor: number };
    expect(latest).toMatchObject({ streamId: id, state: "completed", cursor: 5 });
    expect(env.BuildLog).toBeDefined();
  });
});
