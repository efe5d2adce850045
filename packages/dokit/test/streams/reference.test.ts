import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fresh } from "../helpers";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: { fetch(input: Request | string, init?: RequestInit): Promise<Response> } }).default;

describe("the reference's documented examples, import paths changed", () => {
  it("produce, consume, read in batches, serve SSE, and cut over as agents/streams documents", async () => {
    const name = fresh("reference");
    const stub = env.REFERENCE.getByName(name);
    await stub.produce({ model: "m" }, { text: "hello" });
    expect(await stub.consume(0)).toEqual({ chunks: [{ text: "hello" }], state: "completed" });
    expect(await stub.batches(0)).toEqual([1]);
    const response = await worker.fetch(`http://example.com/agents/reference/${name}`);
    expect(await response.text()).toBe('id: 0\ndata: {"text":"hello"}\n\nevent: up-to-date\ndata: {}\n\nevent: done\ndata: {}\n\n');
    expect(await stub.cutover()).toEqual({ messages: 1, status: null });
  });
});
