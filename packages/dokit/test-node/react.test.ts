// dokit/react without a browser: the snapshot store's batching, and that a
// render alone opens no socket. The hook in a real browser is the examples' job.
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, it, vi } from "vitest";
import { createSnapshotStore } from "../src/react/snapshot";
import { useAgent } from "../src/react";
import type { UseAgentResult } from "../src/react";

/** A stand-in with the members the store reads. */
function fakeClient() {
  const listeners = new Set<() => void>();
  return {
    state: 0 as number | undefined,
    mcp: undefined,
    identified: false,
    ready: Promise.resolve(),
    connectionError: null,
    name: "n",
    agent: "a",
    subscribe(listener: () => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit() {
      for (const listener of listeners) listener();
    },
  };
}

describe("createSnapshotStore", () => {
  it("coalesces a burst of changes into one notification", async () => {
    const client = fakeClient();
    const store = createSnapshotStore(client);
    const onChange = vi.fn();
    const unsubscribe = store.subscribe(onChange);
    const before = store.get();
    for (let n = 1; n <= 100; n++) {
      client.state = n;
      client.emit();
    }
    expect(onChange).not.toHaveBeenCalled();
    await Promise.resolve();
    expect(onChange).toHaveBeenCalledTimes(1);
    expect(store.get().state).toBe(100);
    expect(store.get()).not.toBe(before);
    unsubscribe();
  });

  it("keeps the same snapshot when nothing watched changed", async () => {
    const client = fakeClient();
    const store = createSnapshotStore(client);
    const onChange = vi.fn();
    store.subscribe(onChange);
    const before = store.get();
    client.emit();
    await Promise.resolve();
    expect(onChange).not.toHaveBeenCalled();
    expect(store.get()).toBe(before);
  });

  it("catches changes made between render and subscribe", () => {
    const client = fakeClient();
    const store = createSnapshotStore(client);
    client.identified = true;
    const onChange = vi.fn();
    store.subscribe(onChange);
    expect(onChange).toHaveBeenCalledTimes(1);
    expect(store.get().identified).toBe(true);
  });
});

describe("useAgent", () => {
  it("renders the client's members without opening a socket", () => {
    const seen: Array<UseAgentResult<unknown, unknown>> = [];
    const onOpen = vi.fn();
    function View() {
      const agent = useAgent({ agent: "RefAgent", name: "render-only", host: "127.0.0.1:9", onOpen });
      seen.push(agent);
      return createElement("p", null, String(agent.identified));
    }
    expect(renderToString(createElement(View))).toBe("<p>false</p>");
    const [agent] = seen;
    expect(agent!.state).toBeUndefined();
    expect(agent!.agent).toBe("ref-agent");
    expect(typeof agent!.call).toBe("function");
    expect(agent!.stub.then).toBeUndefined();
    expect(onOpen).not.toHaveBeenCalled();
  });
});
