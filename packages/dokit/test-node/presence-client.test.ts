// dokit's client side of presence (`client.presence`, `usePresence`) over real loopback
// sockets: against a scripted WebSocket server in this process, which checks exactly what the
// client sends and how it reads what it is sent (well-formed or not); then against the real
// `dokit/presence` in the worker wrangler runs (presence-client.objects.ts), beside the
// official `agents` client.
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { AgentClient as OfficialClient } from "agents/client";
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, expectTypeOf, inject, it, onTestFinished, vi } from "vitest";
import { WebSocket as WsSocket, WebSocketServer, type WebSocket as ServerSocket } from "ws";
import { AgentClient } from "../src/client";
import type { AgentClientOptions, ClientPresence, PresenceChange, PresenceEntry } from "../src/client";
import { usePresence } from "../src/react";
import { createPresenceStore } from "../src/react/use-presence";
import { evict, eventually, fresh, sleep } from "./helpers";
import type { Cursor } from "./presence-client.objects";
import { publicIdOf as pub } from "../test/public-id";

// ── A scripted server ───────────────────────────────────────────────

/** One connection the scripted server accepted: its socket and the text frames it received. */
interface Accepted {
  socket: ServerSocket;
  received: string[];
}

/**
 * A WebSocket server on 127.0.0.1 that greets every connection with an identity and records
 * what it receives; the test sends the rest.
 */
async function scriptedServer() {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const accepted: Accepted[] = [];
  server.on("connection", (socket) => {
    const connection: Accepted = { socket, received: [] };
    accepted.push(connection);
    socket.on("message", (data) => connection.received.push(String(data)));
    socket.send(JSON.stringify({ type: "cf_agent_identity", name: "room", agent: "scripted" }));
  });
  await once(server, "listening");
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    host,
    accepted,
    /** @returns the `n`th connection (from 1), once it is accepted */
    async connection(n: number): Promise<Accepted> {
      await eventually(() => expect(accepted.length).toBeGreaterThanOrEqual(n));
      return accepted[n - 1]!;
    },
  };
}

/** @returns the presence frames among `received` */
const presenceFrames = (received: string[]) => received.filter((frame) => frame.startsWith('{"type":"dokit_presence"'));

/** A dokit client of the scripted server that reconnects quickly; closed when the test ends. */
function scriptedClient<P>(host: string, options: { onPresenceError?: (error: string) => void; onFrameError?: (error: Error & { problem: string }) => void } = {}) {
  const client = new AgentClient<unknown, unknown, P>({ agent: "scripted", name: "room", host, id: "me", minReconnectionDelay: 20, maxReconnectionDelay: 40, ...options });
  onTestFinished(() => client.close());
  return client;
}

/** Sends `frames` and then a marker message, and waits until the client has received them all. */
async function deliver(socket: ServerSocket, client: EventTarget, ...frames: unknown[]): Promise<void> {
  const marker = `marker-${Math.random()}`;
  const seen = new Promise<void>((resolve) => {
    const listener = (event: Event) => {
      if ((event as MessageEvent).data !== marker) return;
      client.removeEventListener("message", listener);
      resolve();
    };
    client.addEventListener("message", listener);
  });
  for (const frame of frames) socket.send(JSON.stringify(frame));
  socket.send(marker);
  await seen;
}

/** Records every change a presence reports. */
function recordChanges<P>(client: { readonly presence: ClientPresence<P> }): PresenceChange<P>[] {
  const changes: PresenceChange<P>[] = [];
  client.presence.subscribe((change) => changes.push(change));
  return changes;
}

describe("presence client against a scripted server", () => {
  it("sends nothing about presence until watch() is called, then one watch frame", async () => {
    const server = await scriptedServer();
    const client = scriptedClient(server.host);
    await client.ready;
    client.send("hello");
    const first = await server.connection(1);
    await eventually(() => expect(first.received).toContain("hello"));
    expect(presenceFrames(first.received)).toEqual([]);
    client.presence.watch();
    client.presence.watch();
    client.send("after");
    await eventually(() => expect(first.received).toContain("after"));
    expect(presenceFrames(first.received)).toEqual(['{"type":"dokit_presence","watch":true}']);
  });

  it("keeps only the latest value while the socket is down, out of the send queue, and sends it once on the next socket", async () => {
    const server = await scriptedServer();
    const client = scriptedClient<{ n: number }>(server.host);
    await client.ready;
    client.presence.set({ n: 0 });
    const first = await server.connection(1);
    await eventually(() => expect(presenceFrames(first.received)).toEqual(['{"type":"dokit_presence","value":{"n":0}}']));

    // Set from the close event on, before the reconnect timer can open the next socket.
    const closed = new Promise((resolve) => client.addEventListener("close", resolve, { once: true }));
    first.socket.close(1012, "restarting");
    await closed;
    for (let n = 1; n <= 200; n++) client.presence.set({ n });
    client.send("queued");
    expect(client.bufferedAmount).toBe("queued".length);

    const second = await server.connection(2);
    await eventually(() => expect(second.received).toContain("queued"));
    await sleep(50);
    expect(presenceFrames(second.received)).toEqual(['{"type":"dokit_presence","value":{"n":200}}']);
  });

  it("re-sends after a reconnect: a cleared value as a watch request, an unwatched value with watch:false; watch:true when watching again", async () => {
    const server = await scriptedServer();
    const client = scriptedClient<string>(server.host);
    await client.ready;
    client.presence.set("a");
    client.presence.clear();
    const first = await server.connection(1);
    await eventually(() => expect(presenceFrames(first.received)).toHaveLength(2));
    expect(presenceFrames(first.received)).toEqual(['{"type":"dokit_presence","value":"a"}', '{"type":"dokit_presence","value":null}']);

    client.reconnect();
    const second = await server.connection(2);
    await eventually(() => expect(presenceFrames(second.received)).toEqual(['{"type":"dokit_presence","watch":true}']));

    client.presence.set("b");
    client.presence.unwatch();
    client.presence.clear(); // leaves, and does not watch again
    client.presence.set("b");
    client.presence.unwatch();
    client.reconnect();
    const third = await server.connection(3);
    await eventually(() => expect(presenceFrames(third.received)).toEqual(['{"type":"dokit_presence","value":"b","watch":false}']));
    // A later frame changes watching only when it says so: set() after unwatch() asks to watch again.
    client.presence.set("c");
    client.presence.set("d");
    await eventually(() =>
      expect(presenceFrames(third.received)).toEqual([
        '{"type":"dokit_presence","value":"b","watch":false}',
        '{"type":"dokit_presence","value":"c","watch":true}',
        '{"type":"dokit_presence","value":"d"}',
      ]),
    );
    expect(presenceFrames(second.received)).toEqual([
      '{"type":"dokit_presence","watch":true}',
      '{"type":"dokit_presence","value":"b"}',
      '{"type":"dokit_presence","watch":false}',
      '{"type":"dokit_presence","value":null}',
      '{"type":"dokit_presence","value":"b","watch":true}',
      '{"type":"dokit_presence","watch":false}',
    ]);
  });

  it("refuses a value JSON cannot carry at set(), sending nothing and keeping the old one", async () => {
    const server = await scriptedServer();
    const client = scriptedClient<unknown>(server.host);
    await client.ready;
    client.presence.set({ name: "kept" });
    expect(() => client.presence.set({ big: 1n })).toThrow(TypeError);
    expect(() => client.presence.set(undefined)).toThrow("dokit: a presence value must be a JSON value");
    client.reconnect();
    const second = await server.connection(2);
    await eventually(() => expect(presenceFrames(second.received)).toEqual(['{"type":"dokit_presence","value":{"name":"kept"}}']));
  });

  it("replaces the list with each snapshot, diffed into joined, updated and left; change frames patch it", async () => {
    const server = await scriptedServer();
    const client = scriptedClient<{ x: number }>(server.host);
    const changes = recordChanges(client);
    await client.ready;
    const socket = (await server.connection(1)).socket;
    const send = (frame: unknown) => socket.send(JSON.stringify(frame));

    send({ type: "dokit_presence", you: "me", all: [["me", { x: 0 }], ["a", { x: 1 }], ["b", { x: 2 }]] });
    await eventually(() => expect(changes).toHaveLength(1));
    expect(changes[0]).toEqual({ joined: [{ id: "me", value: { x: 0 } }, { id: "a", value: { x: 1 } }, { id: "b", value: { x: 2 } }], updated: [], left: [] });
    expect(client.presence.self).toBe(client.id);
    const keptA = client.presence.get("a");

    send({ type: "dokit_presence", you: "me", all: [["me", { x: 0 }], ["a", { x: 1 }], ["b", { x: 3 }], ["c", { x: 4 }]] });
    await eventually(() => expect(changes).toHaveLength(2));
    expect(changes[1]).toEqual({ joined: [{ id: "c", value: { x: 4 } }], updated: [{ id: "b", value: { x: 3 } }], left: [] });
    expect(client.presence.get("a")).toBe(keptA); // an unchanged value keeps its object

    send({ type: "dokit_presence", set: [["c", { x: 5 }], ["d", { x: 6 }]], left: ["a", "nobody"] });
    await eventually(() => expect(changes).toHaveLength(3));
    expect(changes[2]).toEqual({ joined: [{ id: "d", value: { x: 6 } }], updated: [{ id: "c", value: { x: 5 } }], left: ["a"] });
    await deliver(socket, client, { type: "dokit_presence", set: [["d", { x: 6 }]] });
    expect(changes).toHaveLength(3); // the same value again (say, this connection's own, confirmed) is no change

    send({ type: "dokit_presence", you: "me", all: [["__proto__", { x: 7 }]] });
    await eventually(() => expect(changes).toHaveLength(4));
    expect(changes[3]).toEqual({ joined: [{ id: "__proto__", value: { x: 7 } }], updated: [], left: ["me", "b", "c", "d"] });
    expect(client.presence.list()).toEqual([{ id: "__proto__", value: { x: 7 } }]);
    expect(client.presence.others()).toEqual([{ id: "__proto__", value: { x: 7 } }]);
    expect(client.presence.count).toBe(1);
    expect(client.presence.get("__proto__")).toEqual({ x: 7 });
  });

  it("reports every malformed presence and dokit_error frame through onFrameError, never throws, and keeps the list", async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.prependListener("uncaughtException", onUncaught);
    onTestFinished(() => void process.removeListener("uncaughtException", onUncaught));
    const server = await scriptedServer();
    const reports: string[] = [];
    const client = scriptedClient<number>(server.host, { onFrameError: (error) => reports.push(error.problem) });
    const changes = recordChanges(client);
    await client.ready;
    const socket = (await server.connection(1)).socket;
    socket.send(JSON.stringify({ type: "dokit_presence", you: "me", all: [["a", 1]] }));
    const malformed: [unknown, string][] = [
      [{ type: "dokit_presence", you: { toString: null }, all: [] }, "you is not a string"],
      [{ type: "dokit_presence", you: "me", all: { a: 1 } }, "all is not an array"],
      [{ type: "dokit_presence", you: "me" }, "all is not an array"],
      [{ type: "dokit_presence", all: [] }, "you is not a string"],
      [{ type: "dokit_presence", you: "me", all: [["a"]] }, "all[0] is not an [id, value] pair"],
      [{ type: "dokit_presence", you: "me", all: [[1, 1]] }, "all[0] has an id that is not a string"],
      [{ type: "dokit_presence", you: "me", all: [["a", null]] }, "all[0] has no value"],
      [{ type: "dokit_presence", set: "a" }, "set is not an array"],
      [{ type: "dokit_presence", set: [null] }, "set[0] is not an [id, value] pair"],
      [{ type: "dokit_presence", set: [[{ toString: null }, 1]] }, "set[0] has an id that is not a string"],
      [{ type: "dokit_presence", left: "a" }, "left is not an array"],
      [{ type: "dokit_presence", left: [{ toString: null }] }, "left has an id that is not a string"],
      [{ type: "dokit_error", code: { toString: null }, error: "x" }, "code is not a string"],
      [{ type: "dokit_error", code: "PRESENCE_REJECTED", error: 42 }, "error is not a string"],
    ];
    for (const [frame] of malformed) socket.send(JSON.stringify(frame));
    socket.send(JSON.stringify({ type: "dokit_presence", set: [["b", 2]] }));
    await eventually(() => expect(changes).toHaveLength(2));
    expect(reports).toEqual(malformed.map(([, problem]) => problem));
    expect(client.presence.list()).toEqual([{ id: "a", value: 1 }, { id: "b", value: 2 }]);
    expect(uncaught).toEqual([]);
  });

  it("passes PRESENCE_REJECTED to onPresenceError and re-sends the value the server kept after a reconnect", async () => {
    const server = await scriptedServer();
    const refusals: string[] = [];
    const client = scriptedClient<string>(server.host, { onPresenceError: (error) => refusals.push(error) });
    await client.ready;
    client.presence.set("good");
    const first = await server.connection(1);
    first.socket.send(JSON.stringify({ type: "dokit_presence", you: "me", all: [["me", "good"]] }));
    await eventually(() => expect(client.presence.get("me")).toBe("good"));
    client.presence.set("bad");
    first.socket.send(JSON.stringify({ type: "dokit_error", code: "PRESENCE_REJECTED", error: "value too large" }));
    first.socket.send(JSON.stringify({ type: "dokit_error", code: "RATE_LIMITED", error: "Too many messages", retryAfterMs: 5 }));
    await eventually(() => expect(refusals).toEqual(["value too large"]));

    client.reconnect();
    const second = await server.connection(2);
    await eventually(() => expect(presenceFrames(second.received)).toEqual(['{"type":"dokit_presence","value":"good"}']));
  });

  it("a throwing listener is reported asynchronously; the other listeners and the client carry on", async () => {
    // Only this test's handler sees the rethrown error (vitest's own would count it as unhandled).
    const saved = process.listeners("uncaughtException");
    process.removeAllListeners("uncaughtException");
    const uncaught: unknown[] = [];
    process.on("uncaughtException", (error) => uncaught.push(error));
    onTestFinished(() => {
      process.removeAllListeners("uncaughtException");
      for (const listener of saved) process.on("uncaughtException", listener);
    });
    const server = await scriptedServer();
    const client = scriptedClient<number>(server.host);
    client.presence.subscribe(() => {
      throw new Error("listener bug");
    });
    const changes = recordChanges(client);
    await client.ready;
    const socket = (await server.connection(1)).socket;
    await deliver(socket, client, { type: "dokit_presence", you: "me", all: [["a", 1]] }, { type: "dokit_presence", set: [["b", 2]] });
    expect(changes).toEqual([
      { joined: [{ id: "a", value: 1 }], updated: [], left: [] },
      { joined: [{ id: "b", value: 2 }], updated: [], left: [] },
    ]);
    await eventually(() => expect(uncaught).toHaveLength(2));
    expect((uncaught[0] as Error).message).toBe("listener bug");
    expect(client.readyState).toBe(client.OPEN);
  });

  it("types values by AgentClient's third type parameter; two type arguments keep working", () => {
    const typed = new AgentClient<unknown, { count: number }, Cursor>({ agent: "scripted", startClosed: true });
    expectTypeOf(typed.presence.list()).toEqualTypeOf<PresenceEntry<Cursor>[]>();
    expectTypeOf(typed.presence.get).returns.toEqualTypeOf<Cursor | undefined>();
    expectTypeOf(typed.presence.set).parameter(0).toEqualTypeOf<Cursor>();
    const untyped = new AgentClient<unknown, { count: number }>({ agent: "scripted", startClosed: true });
    expectTypeOf(untyped.presence.list()).toEqualTypeOf<PresenceEntry<unknown>[]>();
    expectTypeOf(untyped.state).toEqualTypeOf<{ count: number } | undefined>();
    expect(typed.presence.count + untyped.presence.count).toBe(0);
  });

  it("ignores presence frames after unwatch() and empties the list; close() empties it too", async () => {
    const server = await scriptedServer();
    const client = scriptedClient<number>(server.host);
    const changes = recordChanges(client);
    await client.ready;
    const socket = (await server.connection(1)).socket;
    socket.send(JSON.stringify({ type: "dokit_presence", you: "me", all: [["a", 1]] }));
    await eventually(() => expect(client.presence.count).toBe(1));
    client.presence.unwatch();
    expect(changes.at(-1)).toEqual({ joined: [], updated: [], left: ["a"] });
    await deliver(socket, client, { type: "dokit_presence", set: [["b", 2]] });
    expect(client.presence.list()).toEqual([]);

    client.presence.watch();
    socket.send(JSON.stringify({ type: "dokit_presence", you: "me", all: [["c", 3]] }));
    await eventually(() => expect(client.presence.count).toBe(1));
    client.close();
    expect(client.presence.list()).toEqual([]);
    expect(changes.at(-1)).toEqual({ joined: [], updated: [], left: ["c"] });
  });
});

// ── Against dokit/presence ──────────────────────────────────────────

const base = new URL(inject("workerUrl"));

/** A dokit client of a PresenceClientRoom that reconnects quickly; closed when the test ends. */
function roomClient(name: string, options: Partial<AgentClientOptions<{ count: number }>> = {}) {
  const client = new AgentClient<unknown, { count: number }, Cursor>({
    agent: "PresenceClientRoom",
    name,
    host: base.host,
    minReconnectionDelay: 20,
    maxReconnectionDelay: 40,
    ...options,
  });
  onTestFinished(() => client.close());
  return client;
}

/** @returns the names of everyone in `client`'s list, sorted */
const names = (client: { readonly presence: ClientPresence<Cursor> }) => client.presence.list().map((entry) => entry.value.name).sort();

/** A gate for a client's `query()`: while shut, the client cannot open its next socket. */
function gate() {
  let open: () => void = () => {};
  let shut: Promise<void> = Promise.resolve();
  return {
    query: async () => {
      await shut;
      return {};
    },
    shut: () => void (shut = new Promise<void>((resolve) => (open = resolve))),
    open: () => open(),
  };
}

describe("presence client against dokit/presence", () => {
  it("two clients see each other join, update, clear and leave", async () => {
    const room = fresh("presence-pair");
    const a = roomClient(room);
    const b = roomClient(room);
    const seenByA = recordChanges(a);
    a.presence.set({ name: "a" });
    await eventually(() => expect(a.presence.get(pub(a.id))).toEqual({ name: "a" }));
    expect(a.presence.self).toBe(pub(a.id));
    b.presence.set({ name: "b" });
    await eventually(() => expect(names(a)).toEqual(["a", "b"]));
    await eventually(() => expect(names(b)).toEqual(["a", "b"]));
    expect(b.presence.self).toBe(pub(b.id));
    expect(a.presence.others()).toEqual([{ id: pub(b.id), value: { name: "b" } }]);
    expect(seenByA.at(-1)).toEqual({ joined: [{ id: pub(b.id), value: { name: "b" } }], updated: [], left: [] });

    b.presence.set({ name: "b", x: 1 });
    await eventually(() => expect(a.presence.get(pub(b.id))).toEqual({ name: "b", x: 1 }));
    expect(seenByA.at(-1)).toEqual({ joined: [], updated: [{ id: pub(b.id), value: { name: "b", x: 1 } }], left: [] });

    b.presence.clear();
    await eventually(() => expect(seenByA.at(-1)).toEqual({ joined: [], updated: [], left: [pub(b.id)] }));
    expect(a.presence.count).toBe(1);
    expect(b.readyState).toBe(b.OPEN);
    await eventually(() => expect(b.presence.list()).toEqual([{ id: pub(a.id), value: { name: "a" } }]));

    b.presence.set({ name: "b again" });
    await eventually(() => expect(names(a)).toEqual(["a", "b again"]));
    b.close();
    await eventually(() => expect(seenByA.at(-1)).toEqual({ joined: [], updated: [], left: [pub(b.id)] }));
    expect(a.presence.list()).toEqual([{ id: pub(a.id), value: { name: "a" } }]);
  });

  it("re-sends its value after the server closes its socket, and diffs the snapshot after the reconnect against the list it had", async () => {
    const room = fresh("presence-reconnect");
    const slow = gate();
    const a = roomClient(room, { query: slow.query });
    const b = roomClient(room);
    const c = roomClient(room);
    const seenByA = recordChanges(a);
    const seenByB = recordChanges(b);
    a.presence.set({ name: "a" });
    b.presence.set({ name: "b" });
    c.presence.set({ name: "c" });
    await eventually(() => expect(names(a)).toEqual(["a", "b", "c"]));
    await eventually(() => expect(names(b)).toEqual(["a", "b", "c"]));

    // While a is away: a leaves (its socket closed), b changes, c leaves, d joins.
    slow.shut();
    a.send("kick");
    await eventually(() => expect(seenByB.at(-1)).toEqual({ joined: [], updated: [], left: [pub(a.id)] }));
    b.presence.set({ name: "b", x: 2 });
    c.close();
    const d = roomClient(room);
    d.presence.set({ name: "d" });
    await eventually(() => expect(names(b)).toEqual(["b", "d"]));
    expect(names(a)).toEqual(["a", "b", "c"]); // the list a had, until its next snapshot
    const before = seenByA.length;

    slow.open();
    await eventually(() => expect(names(a)).toEqual(["a", "b", "d"]));
    expect(seenByA[before]).toEqual({ joined: [{ id: pub(d.id), value: { name: "d" } }], updated: [{ id: pub(b.id), value: { name: "b", x: 2 } }], left: [pub(c.id)] });
    await sleep(100); // a's own value confirmed by the next tick is no change
    expect(seenByA.length).toBe(before + 1);
    // a's value came back without the app setting it again.
    await eventually(() => expect(seenByB.at(-1)).toEqual({ joined: [{ id: pub(a.id), value: { name: "a" } }], updated: [], left: [] }));
  });

  it("an official agents client on the same object receives no presence frames and works normally", async () => {
    const room = fresh("presence-official");
    const official = new OfficialClient({ agent: "PresenceClientRoom", name: room, host: base.host });
    onTestFinished(() => official.close());
    const received: string[] = [];
    official.addEventListener("message", (event) => received.push(String((event as MessageEvent).data)));
    await official.ready;
    const a = roomClient(room);
    const b = roomClient(room);
    a.presence.set({ name: "a" });
    b.presence.set({ name: "b" });
    for (let x = 1; x <= 5; x++) b.presence.set({ name: "b", x });
    await eventually(() => expect(a.presence.get(pub(b.id))).toEqual({ name: "b", x: 5 }));
    expect(names(a)).toEqual(["a", "b"]); // the official client is connected, not present

    official.send("hello");
    official.setState({ count: 7 });
    await eventually(() => expect(received).toContain("echo:hello"));
    await eventually(() => expect(a.state).toEqual({ count: 7 }));
    expect(received.filter((frame) => frame.includes("dokit_presence") || frame.includes("dokit_error"))).toEqual([]);
    expect(received[0]).toMatch(/^\{"type":"cf_agent_identity"/);
  });

  it("a refused value reaches onPresenceError; the others keep the previous one, which a reconnect re-sends", async () => {
    const room = fresh("presence-refused");
    const refusals: string[] = [];
    const away = gate();
    const a = roomClient(room, { onPresenceError: (error) => refusals.push(error), query: away.query });
    const b = roomClient(room);
    const seenByB = recordChanges(b);
    a.presence.set({ name: "a" });
    await eventually(() => expect(a.presence.get(pub(a.id))).toEqual({ name: "a" }));
    await eventually(() => expect(b.presence.get(pub(a.id))).toEqual({ name: "a" }));

    a.presence.set({ name: "x".repeat(200) });
    a.presence.set({ x: 1 } as Cursor);
    await eventually(() => expect(refusals).toEqual(["Presence value over 128 bytes", "Presence value rejected"]));
    await sleep(100); // past the server's tick
    expect(b.presence.get(pub(a.id))).toEqual({ name: "a" });

    away.shut(); // a stays away until b has seen it leave
    a.send("kick");
    await eventually(() => expect(seenByB.at(-1)?.left).toEqual([pub(a.id)]));
    away.open();
    await eventually(() => expect(seenByB.at(-1)).toEqual({ joined: [{ id: pub(a.id), value: { name: "a" } }], updated: [], left: [] }));
    expect(refusals).toHaveLength(2); // the refused values were not sent again
  });

  it("works the same over the Cap'n Web transport", async () => {
    const room = fresh("presence-capnweb");
    const json = roomClient(room);
    const native = roomClient(room, { transport: "capnweb" });
    json.presence.set({ name: "json" });
    native.presence.set({ name: "capnweb" });
    await eventually(() => expect(names(native)).toEqual(["capnweb", "json"]));
    await eventually(() => expect(names(json)).toEqual(["capnweb", "json"]));
    expect(native.presence.self).toBe(pub(native.id));
    native.presence.clear();
    await eventually(() => expect(names(json)).toEqual(["json"]));
  });

  it("the values outlive a hibernation: after an eviction a newcomer's snapshot has them and changes keep flowing", async () => {
    const room = fresh("presence-evicted");
    const a = roomClient(room);
    a.presence.set({ name: "a" });
    await eventually(() => expect(a.presence.get(pub(a.id))).toEqual({ name: "a" }));
    await evict(room, "evict-presence-client");
    const b = roomClient(room);
    b.presence.watch();
    await eventually(() => expect(b.presence.list()).toEqual([{ id: pub(a.id), value: { name: "a" } }]));
    a.presence.set({ name: "a", x: 3 });
    await eventually(() => expect(b.presence.get(pub(a.id))).toEqual({ name: "a", x: 3 }));
  });
});

/** A `ws` socket to a PresenceClientSlowTick with connection id `id`, with a promise per text frame it awaits. */
async function slowTickSocket(room: string, id: string) {
  const ws = new WsSocket(`ws://${base.host}/agents/presence-client-slow-tick/${room}?_pk=${id}`);
  onTestFinished(() => ws.terminate());
  await once(ws, "open");
  return {
    ws,
    /** @returns the first frame from now on that starts with `prefix` */
    frame: (prefix: string) =>
      new Promise<string>((resolve) => {
        const listener = (data: unknown) => {
          if (!String(data).startsWith(prefix)) return;
          ws.off("message", listener);
          resolve(String(data));
        };
        ws.on("message", listener);
      }),
  };
}

describe("dokit/presence: a replaced connection", () => {
  // The server holds each tick's changes by public id (one per connection id). When a client comes back with its id
  // (a reconnect the server has not seen the old socket close for), the new socket replaces the
  // old one with 4009, and the old socket's close may arrive in the same tick as the new socket's
  // value: the old one's leave must not take the new value's place.
  it("keeps the new socket's value when the old socket's close arrives in the same tick", async () => {
    const room = fresh("presence-replaced");
    const watcher = new AgentClient<unknown, unknown, Cursor>({ agent: "PresenceClientSlowTick", name: room, host: base.host });
    onTestFinished(() => watcher.close());
    watcher.presence.watch();
    await eventually(() => expect(watcher.presence.self).toBe(pub(watcher.id)));
    // Sent after the watcher's snapshot, the first value reaches it with a tick, which stores it in the old socket's attachment.
    const old = await slowTickSocket(room, "shared");
    old.ws.send(JSON.stringify({ type: "dokit_presence", value: { name: "first" } }));
    await eventually(() => expect(watcher.presence.get(pub("shared"))).toEqual({ name: "first" }), { timeout: 3000 });

    // SAFETY: `_socket` is ws's net.Socket; paused, the old client reads nothing, so it answers the 4009 close only on resume().
    const tcp = (old.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    tcp.pause();
    const replacing = await slowTickSocket(room, "shared");
    replacing.ws.send(JSON.stringify({ type: "dokit_presence", value: { name: "second" } }));
    const echoed = replacing.frame("echo:");
    replacing.ws.send("sync");
    await echoed; // the value is held for the tick
    tcp.resume(); // the old socket's close arrives within the same tick

    await sleep(1500);
    const listed = replacing.frame("list:");
    replacing.ws.send("list");
    expect({ server: JSON.parse((await listed).slice(5)), watcher: watcher.presence.get(pub("shared")) }).toEqual({
      server: [{ id: "shared", publicId: pub("shared"), value: { name: "second" } }],
      watcher: { name: "second" },
    });
  });
});

describe("usePresence against dokit/presence", () => {
  it("its store starts watching on subscribe, and renews its snapshot only when the list changes", async () => {
    const room = fresh("presence-store");
    const watcher = roomClient(room);
    const store = createPresenceStore(watcher.presence);
    const empty = store.get();
    expect(empty).toEqual({ self: undefined, list: [], others: [] });
    const onChange = vi.fn();
    const unsubscribe = store.subscribe(onChange);
    onTestFinished(unsubscribe);
    await eventually(() => expect(store.get().self).toBe(pub(watcher.id)));

    const other = roomClient(room);
    other.presence.set({ name: "o" });
    await eventually(() => expect(store.get().others).toEqual([{ id: pub(other.id), value: { name: "o" } }]));
    const calls = onChange.mock.calls.length;
    const snapshot = store.get();
    expect(snapshot.list).toEqual(snapshot.others); // the watcher publishes nothing

    other.presence.set({ name: "o" }); // the same value: no change, no new snapshot
    other.send("sync");
    await sleep(100);
    expect(store.get()).toBe(snapshot);
    expect(onChange.mock.calls.length).toBe(calls);
    other.close();
    await eventually(() => expect(store.get().list).toEqual([]));
  });

  it("renders the list of a client that watches; a render alone starts no watching", async () => {
    const room = fresh("presence-render");
    const present = roomClient(room);
    present.presence.set({ name: "ada" });
    const watching = roomClient(room);
    watching.presence.watch();
    await eventually(() => expect(names(watching)).toEqual(["ada"]));
    const idle = roomClient(room);
    await idle.ready;

    function Who({ client }: { client: { readonly id: string; readonly presence: ClientPresence<Cursor> } }) {
      const { self, list, others } = usePresence(client);
      return createElement("p", null, `${self === pub(client.id)} ${list.map((entry) => entry.value.name).join(",")} ${others.length}`);
    }
    expect(renderToString(createElement(Who, { client: watching }))).toBe("<p>true ada 1</p>");
    expect(renderToString(createElement(Who, { client: idle }))).toBe("<p>false  0</p>");
    await sleep(200);
    expect(idle.presence.self).toBeUndefined(); // no snapshot: it never asked to watch
  });
});
