import { env, exports } from "cloudflare:workers";
import { hibernate, openSocket } from "dokit/testing";
import { describe, expect, it } from "vitest";
import { fresh } from "../../test-helpers";

// The Worker's own fetch (typed by GlobalProps in env.d.ts): requests go through its routing.
const worker = exports.default;

/** Opens both kinds of socket to counter `name` and reads what each gets on connect. */
async function bothClients(name: string) {
  const legacy = await openSocket(worker, `http://example.com/counter/${name}/socket`);
  expect(await legacy.next()).toBe("count:0");
  const dokit = await openSocket(worker, `http://example.com/agents/counter/${name}`);
  expect(await dokit.nextJSON()).toEqual({ type: "cf_agent_identity", name, agent: "counter" });
  return { legacy, dokit };
}

describe("mix-in: an existing Durable Object with dokit added", () => {
  it("keeps the object's own HTTP routes", async () => {
    const name = fresh("http");
    expect(await (await worker.fetch(`http://example.com/counter/${name}`, { method: "POST" })).json()).toEqual({ count: 1 });
    expect(await (await worker.fetch(`http://example.com/counter/${name}`)).json()).toEqual({ count: 1 });
  });

  it("serves its old sockets and dokit connections side by side, each seeing the other's changes", async () => {
    const name = fresh("both");
    const { legacy, dokit } = await bothClients(name);

    legacy.send("increment");
    expect(await legacy.next()).toBe("count:1");
    expect(await dokit.nextJSON()).toEqual({ type: "count", count: 1, by: "legacy" });

    expect(await dokit.rpc("increment")).toBe(2);
    expect(await legacy.next()).toBe("count:2");
    expect(await dokit.nextJSON()).toEqual({ type: "count", count: 2, by: "dokit" });

    // Only the callables class is exposed, not the object's own methods.
    await expect(dokit.rpc("fetch")).rejects.toThrow("Method fetch does not exist");
    legacy.send("bogus");
    expect(await legacy.next()).toBe("error:unknown command");
    expect(await dokit.drain()).toEqual([]);
    await Promise.all([legacy.close(), dokit.close()]);
  });

  it("keeps both kinds apart after hibernation", async () => {
    const name = fresh("wake");
    const { legacy, dokit } = await bothClients(name);
    await hibernate(env.Counter.get(env.Counter.idFromName(name)));

    // A fresh instance: the old handler still gets its own socket's text...
    legacy.send("increment");
    expect(await legacy.next()).toBe("count:1");
    expect(await dokit.nextJSON()).toEqual({ type: "count", count: 1, by: "legacy" });
    // ...and dokit still answers its connection's calls.
    expect(await dokit.rpc("count")).toBe(1);
    expect(await legacy.drain()).toEqual([]);
    await Promise.all([legacy.close(), dokit.close()]);
  });

  it("serves the demo page", async () => {
    expect(await (await worker.fetch("http://example.com/")).text()).toContain("dokit mixed in");
    expect((await worker.fetch("http://example.com/page.js")).headers.get("content-type")).toContain("javascript");
  });
});
