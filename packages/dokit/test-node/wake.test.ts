// The first message after a real eviction, as real clients see it: the official client and
// Node's WebSocket over loopback to the worker started by wrangler, the object evicted the way
// hibernation does (evict.route.ts). A later object of a class waits to attach its
// capabilities until an event needs them (docs/lifecycle.md, "Wiring on demand"); each kind of
// first message must be answered as before.
import { AgentClient as OfficialClient } from "agents/client";
import { afterEach, expect, inject, it } from "vitest";
import { evict, frameSocket } from "./helpers";

const base = new URL(inject("workerUrl"));
const cleanup: Array<() => void> = [];

afterEach(() => {
  for (const close of cleanup.splice(0)) close();
});

it("answers each kind of first message after an eviction: a plain message, a state frame, an rpc call, a close", async () => {
  // Two objects of the class: the first shows how the class is wired, the second is measured.
  for (const name of [`wake-first-${Date.now()}`, `wake-${Date.now()}`]) {
    const client = new OfficialClient({ host: base.host, agent: "DokitAgent", name } as never);
    cleanup.push(() => client.close());
    await client.ready;
    const raw = frameSocket(`/agents/dokit-agent/${name}`, 2000);
    expect(JSON.parse(await raw.next())).toMatchObject({ type: "cf_agent_identity", name, agent: "dokit-agent" });
    expect(JSON.parse(await raw.next())).toEqual({ type: "cf_agent_state", state: { count: 0 } });
    expect(JSON.parse(await raw.next())).toMatchObject({ type: "welcome" });

    await evict(name);
    raw.ws.send("echo:after a wake");
    expect(await raw.next()).toBe("echo:after a wake");

    await evict(name);
    client.setState({ count: 3 });
    expect(JSON.parse(await raw.next())).toEqual({ type: "cf_agent_state", state: { count: 3 } });

    await evict(name);
    expect(await client.call("add", [2, 3])).toBe(5);

    await evict(name);
    raw.ws.close(1000, "done");
    expect(await raw.closed).toEqual({ code: 1000, reason: "done" });
    client.close();
  }
});
