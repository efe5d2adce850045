// expectHibernates (dokit/testing) on McpClients objects in workerd: with a short
// streamIdleMs the object hibernates after a tool call and the next call answers from a
// fresh instance; with the default (30 s) the check names the open notification stream.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { expectHibernates } from "../../src/testing";
import { fresh, textOf } from "../helpers";

const serverUrl = (name: string) => `https://mcp.test/agents/mcp-server/${name}/mcp`;
type Fn = (...args: any[]) => Promise<any>;
type Api = DurableObjectStub & { [K in "add" | "callTool" | "servers"]: Fn };

describe("McpClients and expectHibernates", () => {
  it("an object with streamIdleMs 300 hibernates after a tool call; the next call reconnects on a fresh instance", async () => {
    const stub = env.IDLE_ASSISTANT.getByName(fresh("idle")) as unknown as Api;
    expect(await stub.add("counter", serverUrl(fresh("srv")), { id: "c" })).toEqual({ id: "c", state: "ready" });
    expect(textOf(await stub.callTool("c", "add", { a: 2 }))).toBe("total 2");
    const { result } = await expectHibernates(stub, { next: () => stub.callTool("c", "add", { a: 3 }), idleMs: 500 });
    expect(textOf(result)).toBe("total 5");
  }, 30_000);

  it("an object with the default streamIdleMs is still kept awake by its notification stream right after a call, and the check says so", async () => {
    const stub = env.ASSISTANT.getByName(fresh("awake")) as unknown as Api;
    const url = serverUrl(fresh("srv"));
    await stub.add("counter", url, { id: "c" });
    expect(textOf(await stub.callTool("c", "add", { a: 1 }))).toBe("total 1");
    await expect(expectHibernates(stub, { next: () => stub.callTool("c", "get"), idleMs: 500 })).rejects.toThrow(
      `the object is still kept awake 500 ms after its last event: MCP server c (${url}): notification stream open, closes after 30000 ms without use`,
    );
  }, 30_000);
});
