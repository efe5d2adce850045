// Live session history over loopback: dokit's AgentClient with a SessionView (dokit/client) and the
// store useSession renders from (dokit/react), against dokit/sessions in the worker wrangler runs
// (sessions-client.objects.ts).
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { afterEach, describe, expect, inject, it } from "vitest";
import { AgentClient, SessionView, SessionWriteError } from "../src/client";
import { useSession } from "../src/react";
import { createSessionStore } from "../src/react/use-session";
import { fresh, sleep } from "./helpers";

const base = new URL(inject("workerUrl"));
const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const stop of cleanup.splice(0)) stop();
});

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !check(); await sleep(10)) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}

const text = (id: string, body: string, role = "user") => ({ id, role, parts: [{ type: "text", text: body }] });

function connect(name: string, query: Record<string, string> = {}): AgentClient {
  const client = new AgentClient({ host: base.host, agent: "SessionsChat", name, query, minReconnectionDelay: 20, maxReconnectionDelay: 60 });
  cleanup.push(() => client.close());
  return client;
}

async function serverAppend(name: string, message: unknown, parentId?: string | null): Promise<void> {
  const response = await fetch(new URL(`/sessions-chat/${name}/append`, base), { method: "POST", body: JSON.stringify({ message, parentId }) });
  expect(response.status).toBe(200);
}

const ids = (view: SessionView) => view.messages.map((message) => message.id);

describe("SessionView (dokit/client) over loopback", () => {
  it("loads the newest page, older pages on demand, and receives appends and updates live", async () => {
    const name = fresh("live-view");
    for (let i = 0; i < 7; i++) await serverAppend(name, text(`m${i}`, `message ${i}`));
    const reader = connect(name);
    const view = new SessionView(reader, { pageSize: 3 });
    cleanup.push(() => view.stop());
    await until(() => view.loaded, "the first page");
    expect(ids(view)).toEqual(["m4", "m5", "m6"]);
    expect(view.hasMore).toBe(true);
    await view.loadMore();
    await view.loadMore();
    expect(ids(view)).toEqual(["m0", "m1", "m2", "m3", "m4", "m5", "m6"]);
    expect(view.hasMore).toBe(false);

    const writer = connect(name, { role: "writer" });
    const pen = new SessionView(writer);
    cleanup.push(() => pen.stop());
    await until(() => pen.loaded, "the writer's page");
    expect(await pen.append(text("c1", "from the page"))).toEqual({ inserted: true });
    await until(() => ids(view).at(-1) === "c1", "the append on the reader");
    expect(await pen.update(text("c1", "from the page, edited"))).toEqual({ found: true });
    await until(() => view.messages.at(-1)?.parts[0] !== undefined && JSON.stringify(view.messages.at(-1)) === JSON.stringify(text("c1", "from the page, edited")), "the update");
    expect(await pen.update(text("nope", "x"))).toEqual({ found: false });
    await serverAppend(name, text("a1", "reply", "assistant"));
    await until(() => ids(view).at(-1) === "a1", "the server's append");
    // The writer hears it too, on its own socket (in no fixed order with the reader's).
    await until(() => ids(pen).at(-1) === "a1", "the server's append on the writer");
    expect(ids(pen)).toEqual(["m0", "m1", "m2", "m3", "m4", "m5", "m6", "c1", "a1"].slice(-ids(pen).length));
  });

  it("follows a branch, and the active leaf when a branch is written", async () => {
    const name = fresh("live-branch");
    await serverAppend(name, text("q", "question"));
    await serverAppend(name, text("a", "first answer", "assistant"));
    const view = new SessionView(connect(name));
    const branch = new SessionView(connect(name), { leafId: "a" });
    cleanup.push(() => view.stop(), () => branch.stop());
    await until(() => view.loaded && branch.loaded, "both pages");
    await serverAppend(name, text("b", "second answer", "assistant"), "q");
    await until(() => ids(view).join() === "q,b", "the active view on the new branch");
    await serverAppend(name, text("a2", "continues the first", "user"), "a");
    await until(() => ids(branch).join() === "q,a,a2", "the followed branch extended");
    expect(branch.leafId).toBe("a2");
    await branch.follow("b");
    expect(ids(branch)).toEqual(["q", "b"]);
  });

  it("resynchronizes after a reconnect and after the object was evicted", async () => {
    const name = fresh("live-resync");
    await serverAppend(name, text("m0", "before"));
    const client = connect(name);
    const view = new SessionView(client);
    cleanup.push(() => view.stop());
    await until(() => view.loaded, "the first page");
    client.reconnect();
    await serverAppend(name, text("m1", "while reconnecting"));
    await until(() => ids(view).join() === "m0,m1", "the page after the reconnect");
    expect((await fetch(new URL(`/evict-sessions-chat/${name}`, base), { method: "POST" })).status).toBe(200);
    await serverAppend(name, text("m2", "after the eviction"));
    await until(() => ids(view).join() === "m0,m1,m2", "the event after the eviction");
  });

  it("a readonly or reading connection's write, and one over the size limit, are refused with their code and nothing is stored", async () => {
    const name = fresh("live-refused");
    const viewer = new SessionView(connect(name, { role: "writer", mode: "view" }));
    const reader = new SessionView(connect(name));
    const writer = new SessionView(connect(name, { role: "writer" }));
    cleanup.push(() => viewer.stop(), () => reader.stop(), () => writer.stop());
    await until(() => viewer.loaded && reader.loaded && writer.loaded, "three pages");
    await expect(viewer.append(text("x", "no"))).rejects.toMatchObject({ name: "SessionWriteError", code: "SESSION_FORBIDDEN", message: "dokit: the server refused it: Connection is readonly" });
    await expect(reader.append(text("x", "no"))).rejects.toMatchObject({ code: "SESSION_FORBIDDEN" });
    const big = writer.append(text("big", "x".repeat(3000)));
    await expect(big).rejects.toBeInstanceOf(SessionWriteError);
    await expect(big).rejects.toMatchObject({ code: "MESSAGE_TOO_LARGE" });
    expect(await (await fetch(new URL(`/sessions-chat/${name}/ids`, base))).json()).toEqual([]);
    expect(await writer.append(text("ok", "fits"))).toEqual({ inserted: true });
    await until(() => ids(reader).join() === "ok", "the accepted write on the reader");
  });
});

describe("useSession (dokit/react) over loopback", () => {
  it("renders the session's messages from a store fed by the live view", async () => {
    const name = fresh("live-react");
    await serverAppend(name, text("m0", "hello"));
    const client = connect(name);
    const view = new SessionView(client);
    cleanup.push(() => view.stop());
    const store = createSessionStore(view);
    let renders = 0;
    const off = store.subscribe(() => renders++);
    cleanup.push(off);
    await until(() => store.get().loaded, "the store's first page");
    expect(store.get().messages.map((message) => message.id)).toEqual(["m0"]);
    const before = store.get();
    await serverAppend(name, text("m1", "world"));
    await until(() => store.get().messages.length === 2, "the append in the store");
    expect(store.get()).not.toBe(before);
    expect(renders).toBeGreaterThanOrEqual(2);

    // The hook renders what its view holds (the server render: the snapshot at that time).
    function Chat() {
      const session = useSession(client);
      return createElement("ul", null, session.messages.map((message) => createElement("li", { key: message.id }, message.id)));
    }
    expect(renderToString(createElement(Chat))).toBe("<ul></ul>");
  });
});
