// dokit/yjs over real loopback sockets, with the real providers: y-websocket's WebsocketProvider
// (Node, `ws` as its WebSocket) and y-partyserver's YProvider, against YjsNotes (yjs.objects.ts).
import { afterEach, describe, expect, inject, it, onTestFinished, vi } from "vitest";
import WebSocket from "ws";
import * as Y from "yjs";
import { WebsocketProvider } from "y-websocket";
import YProvider from "y-partyserver/provider";
import { writeAwareness } from "../src/yjs/awareness";
import { awarenessMessage, Writer } from "../src/yjs/wire";
import { eventually, evict, fresh, sleep } from "./helpers";

/** The WebSocket class y-websocket's provider takes. */
type Polyfill = NonNullable<NonNullable<ConstructorParameters<typeof WebsocketProvider>[3]>["WebSocketPolyfill"]>;

const worker = () => new URL(inject("workerUrl"));
const wsOrigin = () => `ws://${worker().host}`;

/** A y-websocket provider on the object's Yjs path (`/agents/yjs-notes/<name>/yjs`), destroyed when the test ends. */
function provider(name: string, params: Record<string, string> = {}, doc = new Y.Doc()): WebsocketProvider {
  // SAFETY: `ws` implements the WebSocket the provider uses (y-websocket's documented Node setup).
  const made = new WebsocketProvider(`${wsOrigin()}/agents/yjs-notes`, `${name}/yjs`, doc, {
    WebSocketPolyfill: WebSocket as unknown as Polyfill,
    params,
    disableBc: true,
  });
  onTestFinished(() => made.destroy());
  return made;
}

/** @returns once the provider has exchanged both sync steps with the object */
function synced(made: { synced: boolean; on(event: "sync", f: (synced: boolean) => void): void }): Promise<void> {
  if (made.synced) return Promise.resolve();
  return new Promise((resolve) => made.on("sync", (done) => done && resolve()));
}

const body = (made: { doc: Y.Doc }) => made.doc.getText("body").toString();
const route = (name: string, action: string, init?: RequestInit) => fetch(new URL(`/agents/yjs-notes/${name}/${action}`, worker()), init);

/** A raw socket on the Yjs path that records every message (binary as bytes, text as strings). */
function rawSocket(name: string, query = ""): { ws: WebSocket; messages: (Uint8Array | string)[]; opened: Promise<void>; closed: Promise<number> } {
  const ws = new WebSocket(`${wsOrigin()}/agents/yjs-notes/${name}/yjs${query}`);
  const messages: (Uint8Array | string)[] = [];
  ws.on("message", (data, isBinary) => messages.push(isBinary ? new Uint8Array(data as Buffer) : String(data)));
  const opened = new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
  onTestFinished(() => ws.close());
  return { ws, messages, opened, closed };
}

/** @returns `[0, 2, update]`: a y-protocols sync update message (varUint length < 2^21 here) */
function updateMessage(update: Uint8Array): Uint8Array {
  const length: number[] = [];
  let rest = update.byteLength;
  while (rest > 0x7f) {
    length.push(0x80 | (rest & 0x7f));
    rest >>>= 7;
  }
  length.push(rest);
  return Uint8Array.from([0, 2, ...length, ...update]);
}

/**
 * @returns a valid v1 update of `count` one-character items of client `client` in the text `body`, each
 *   inserted before the one before it, so Yjs cannot merge them (about 7 bytes each)
 */
function bomb(count: number, client = 1): Uint8Array {
  const writer = new Writer().uint(1).uint(count).uint(client).uint(0);
  writer.uint(4).uint(1).string("body").string("a");
  for (let clock = 1; clock < count; clock++) writer.uint(0x44).uint(client).uint(clock - 1).string("a");
  return writer.uint(0).finish();
}

afterEach(() => vi.restoreAllMocks());

describe("dokit/yjs with y-websocket's provider", () => {
  it("two providers sync text through the object, and the server reads it", async () => {
    const name = fresh("sync");
    const a = provider(name);
    const b = provider(name);
    await Promise.all([synced(a), synced(b)]);
    a.doc.getText("body").insert(0, "hello from a");
    await eventually(() => expect(body(b)).toBe("hello from a"));
    b.doc.getText("body").insert(0, "b: ");
    await eventually(() => expect(body(a)).toBe("b: hello from a"));
    expect(await (await route(name, "text")).text()).toBe("b: hello from a");
  });

  it("an update survives an eviction: a new provider gets it from storage", async () => {
    const name = fresh("evict");
    const a = provider(name);
    const b = provider(name);
    await Promise.all([synced(a), synced(b)]);
    a.doc.getText("body").insert(0, "kept across hibernation");
    await eventually(() => expect(body(b)).toBe("kept across hibernation"));
    a.destroy();
    b.destroy();
    await evict(name, "evict-yjs");
    const c = provider(name);
    await synced(c);
    expect(body(c)).toBe("kept across hibernation");
  });

  it("every acknowledged update is present after the object is aborted after each message", async () => {
    const name = fresh("abort");
    // The writer never resends (a provider would send its whole document again on reconnect, hiding a loss):
    // a raw socket that sends each update once. An update is acknowledged when the watcher receives it.
    const writer = new Y.Doc();
    const pending: Uint8Array[] = [];
    writer.on("update", (update: Uint8Array) => pending.push(update));
    const acknowledged: string[] = [];
    for (let i = 0; i < 12; i++) {
      const watcher = rawSocket(name);
      const sender = rawSocket(name);
      await Promise.all([watcher.opened, sender.opened]);
      const word = `w${i};`;
      writer.getText("body").insert(writer.getText("body").length, word);
      const update = pending.shift() as Uint8Array;
      sender.ws.send(updateMessage(update));
      // The watcher receives [0, 2, update] once the object stored and applied it.
      await eventually(() => expect(watcher.messages.some((m) => typeof m !== "string" && m[0] === 0 && m[1] === 2)).toBe(true));
      acknowledged.push(word);
      await route(name, "abort", { method: "POST" }).catch(() => undefined);
      await Promise.all([watcher.closed, sender.closed]);
    }
    const reader = provider(name);
    await synced(reader);
    expect(body(reader)).toBe(acknowledged.join(""));
  }, 60_000);

  it("a 50 MB document is stored in rows under the limit, survives an eviction and syncs to a new provider", async () => {
    const name = fresh("big");
    expect((await route(name, "fill?mb=50", { method: "POST" })).status).toBe(200);
    const size = (await (await route(name, "size")).json()) as { snapshotBytes: number; updates: number; length: number };
    expect(size.length).toBe(50 * 1024 * 1024);
    expect(size.snapshotBytes).toBeGreaterThan(50 * 1024 * 1024);
    expect(size.updates).toBe(0);
    await evict(name, "evict-yjs");
    const c = provider(name);
    await synced(c);
    expect(c.doc.getText("body").length).toBe(50 * 1024 * 1024);
    expect(body(c).slice(0, 10)).toBe("abcdefghij");
    // The answer to a new client's sync step 1 comes as updates of at most 16 MiB, under the
    // runtime's 32 MiB message limit, then the step 2 that ends the sync.
    const raw = rawSocket(name);
    await raw.opened;
    raw.ws.send(Uint8Array.from([0, 0, 1, 0])); // [sync, step 1, an empty state vector]
    const isStep2 = (m: Uint8Array | string) => typeof m !== "string" && m[0] === 0 && m[1] === 1;
    await eventually(() => expect(raw.messages.some(isStep2)).toBe(true), { timeout: 30_000 });
    const sync = raw.messages.filter((m): m is Uint8Array => typeof m !== "string" && m[0] === 0 && m[1] !== 0);
    expect(sync.length).toBeGreaterThanOrEqual(4);
    for (const message of sync) expect(message.byteLength).toBeLessThanOrEqual(16 * 1024 * 1024 + 16);
    expect(sync.map((m) => m[1])).toEqual([...sync.slice(1).map(() => 2), 1]);
  }, 120_000);

  it("a readonly connection receives the document and awareness; its updates are refused and it is told", async () => {
    const name = fresh("readonly");
    const writer = provider(name);
    await synced(writer);
    writer.doc.getText("body").insert(0, "published");
    writer.awareness.setLocalStateField("user", "writer");
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const viewer = provider(name, { mode: "view" });
    await synced(viewer);
    await eventually(() => expect(body(viewer)).toBe("published"));
    await eventually(() => expect([...viewer.awareness.getStates().values()].some((state) => state.user === "writer")).toBe(true));
    viewer.doc.getText("body").insert(0, "vandal ");
    await eventually(() => expect(warn).toHaveBeenCalledWith(expect.stringContaining("Connection is readonly")));
    expect(await (await route(name, "text")).text()).toBe("published");
    expect(body(writer)).toBe("published");

    // The same over a raw socket: the refusal is y-protocols/auth's "permission denied" [2, 0, reason].
    const raw = rawSocket(name, "?mode=view");
    await raw.opened;
    const doc = new Y.Doc();
    doc.getText("body").insert(0, "x");
    raw.ws.send(updateMessage(Y.encodeStateAsUpdate(doc)));
    await eventually(() => {
      const denied = raw.messages.find((m) => typeof m !== "string" && m[0] === 2 && m[1] === 0) as Uint8Array | undefined;
      expect(denied && new TextDecoder().decode(denied.subarray(3))).toBe("Connection is readonly");
    });
    expect(await (await route(name, "text")).text()).toBe("published");
  });

  it("a server-side edit is stored and reaches every client, and onChange runs once for a burst", async () => {
    const name = fresh("server");
    const a = provider(name);
    const b = provider(name);
    await Promise.all([synced(a), synced(b)]);
    for (const part of ["one ", "two ", "three"]) await route(name, "edit", { method: "POST", body: part });
    await eventually(() => expect(body(a)).toBe("one two three"));
    await eventually(() => expect(body(b)).toBe("one two three"));
    await eventually(async () => expect(await (await route(name, "changes")).json()).toEqual({ changes: 1, lastSeen: "one two three" }));
    a.destroy();
    b.destroy();
    await evict(name, "evict-yjs");
    expect(await (await route(name, "text")).text()).toBe("one two three");
  });

  it("the JSON protocol works on the object's own URL, and Yjs connections never receive its text frames", async () => {
    const name = fresh("json");
    const raw = rawSocket(name);
    await raw.opened;
    const json = new WebSocket(`${wsOrigin()}/agents/yjs-notes/${name}`);
    const frames: string[] = [];
    json.on("message", (data) => frames.push(String(data)));
    onTestFinished(() => json.close());
    await eventually(() => expect(frames.length).toBeGreaterThanOrEqual(2));
    expect(JSON.parse(frames[0] as string)).toMatchObject({ type: "cf_agent_identity", name, agent: "yjs-notes", stateFollows: true });
    expect(JSON.parse(frames[1] as string)).toEqual({ type: "cf_agent_state", state: { title: "notes" } });
    json.send(JSON.stringify({ type: "cf_agent_state", state: { title: "renamed" } }));
    const other = new WebSocket(`${wsOrigin()}/agents/yjs-notes/${name}`);
    const otherFrames: string[] = [];
    other.on("message", (data) => otherFrames.push(String(data)));
    onTestFinished(() => other.close());
    await eventually(() => expect(otherFrames.map((frame) => JSON.parse(frame))).toContainEqual({ type: "cf_agent_state", state: { title: "renamed" } }));
    // The Yjs socket got its sync step 1 and nothing in text.
    expect(raw.messages.length).toBeGreaterThan(0);
    expect(raw.messages.filter((m) => typeof m === "string")).toEqual([]);
    expect((raw.messages[0] as Uint8Array).subarray(0, 2)).toEqual(Uint8Array.from([0, 0]));
  });

  it("awareness reaches others, survives an eviction, and is removed for a connection that closed while the object slept", async () => {
    const name = fresh("awareness");
    const a = provider(name);
    const b = provider(name);
    await Promise.all([synced(a), synced(b)]);
    a.awareness.setLocalStateField("cursor", 7);
    await eventually(() => expect(b.awareness.getStates().get(a.doc.clientID)).toEqual({ cursor: 7 }));
    await evict(name, "evict-yjs");
    // A new client after the wake is sent a's awareness from its connection's attachment.
    const c = provider(name);
    await synced(c);
    await eventually(() => expect(c.awareness.getStates().get(a.doc.clientID)).toEqual({ cursor: 7 }));
    // [3]: the awareness query is answered with everyone's awareness, a's included.
    const raw = rawSocket(name);
    await raw.opened;
    raw.ws.send(Uint8Array.from([3]));
    const answered = (): string | undefined => {
      const message = raw.messages.findLast((m) => typeof m !== "string" && m[0] === 1) as Uint8Array | undefined;
      return message && new TextDecoder().decode(message);
    };
    await eventually(() => expect(answered()).toContain('{"cursor":7}'));
    raw.ws.close();
    await raw.closed;
    await evict(name, "evict-yjs");
    // a's connection drops while the object sleeps, without a word from a (a provider that is destroyed
    // sends its own removal first): the close wakes the object, which tells the others.
    a.shouldConnect = false;
    (a.ws as unknown as WebSocket).terminate();
    await eventually(() => expect(c.awareness.getStates().has(a.doc.clientID)).toBe(false));
    await eventually(() => expect(b.awareness.getStates().has(a.doc.clientID)).toBe(false));
  });

  it("a forged awareness entry (another's client id, clock up to 2^53 - 1) neither shows nor silences the real client, also after an eviction", async () => {
    const name = fresh("forge");
    const a = provider(name);
    const b = provider(name);
    await Promise.all([synced(a), synced(b)]);
    a.awareness.setLocalStateField("user", "ada");
    await eventually(() => expect(b.awareness.getStates().get(a.doc.clientID)).toEqual({ user: "ada" }));
    // A viewer's socket (readonly, as any participant may be) forges a's entry, then announces its own.
    const attacker = rawSocket(name, "?mode=view");
    await attacker.opened;
    let own = 900;
    const forge = async () => {
      attacker.ws.send(awarenessMessage(writeAwareness([[a.doc.clientID, Number.MAX_SAFE_INTEGER, '{"user":"mallory"}']])));
      attacker.ws.send(awarenessMessage(writeAwareness([[a.doc.clientID, Number.MAX_SAFE_INTEGER, "null"]])));
      own++;
      attacker.ws.send(awarenessMessage(writeAwareness([[4242, own, '{"user":"eve"}']])));
      // Its own entry came after the forged ones on the same socket: once b has it, the forgeries were handled.
      await eventually(() => expect(b.awareness.meta.get(4242)?.clock).toBe(own));
      expect(b.awareness.getStates().get(a.doc.clientID)).toEqual({ user: expect.stringMatching(/^ada/) });
    };
    await forge();
    a.awareness.setLocalStateField("user", "ada 2");
    await eventually(() => expect(b.awareness.getStates().get(a.doc.clientID)).toEqual({ user: "ada 2" }));
    await evict(name, "evict-yjs");
    await forge();
    a.awareness.setLocalStateField("user", "ada 3");
    await eventually(() => expect(b.awareness.getStates().get(a.doc.clientID)).toEqual({ user: "ada 3" }));
    expect(b.awareness.meta.get(a.doc.clientID)?.clock).toBeLessThan(100);
    const c = provider(name);
    await synced(c);
    await eventually(() => expect(c.awareness.getStates().get(a.doc.clientID)).toEqual({ user: "ada 3" }));
  });

  it("a provider that reconnects before its old socket closes gets its awareness id back when that socket closes", async () => {
    const name = fresh("handover");
    const b = provider(name);
    await synced(b);
    // The old socket of client 777, still open on the server.
    const old = rawSocket(name);
    await old.opened;
    old.ws.send(awarenessMessage(writeAwareness([[777, 5, '{"user":"old"}']])));
    await eventually(() => expect(b.awareness.getStates().get(777)).toEqual({ user: "old" }));
    // The same client on a new connection: its announcement waits for the old socket to go.
    const doc = new Y.Doc();
    doc.clientID = 777;
    const a = provider(name, {}, doc);
    await synced(a);
    a.awareness.setLocalStateField("user", "new");
    await sleep(300);
    expect(b.awareness.getStates().get(777)).toEqual({ user: "old" });
    old.ws.close();
    // The object tells everyone 777 left; y-protocols in a answers by announcing itself again.
    await eventually(() => expect(b.awareness.getStates().get(777)).toEqual({ user: "new" }));
  });

  it("2,000 awareness queries and 2,000 sync step 1 requests from a socket that does not read are answered once each", async () => {
    const name = fresh("queries");
    const a = provider(name);
    await synced(a);
    a.awareness.setLocalStateField("user", "x".repeat(3000));
    a.doc.getText("body").insert(0, "y".repeat(10_000));
    const viewer = rawSocket(name, "?mode=view");
    await viewer.opened;
    const awarenessFrames = () => viewer.messages.filter((m) => typeof m !== "string" && m[0] === 1).length;
    // The awareness it is sent on connect (and a relay of the writer's, when that reaches the object after the viewer).
    await eventually(() => expect(awarenessFrames()).toBeGreaterThanOrEqual(1));
    await sleep(300);
    const before = awarenessFrames();
    // SAFETY: ws keeps its net.Socket as _socket; pausing it stops reading, as a client that never reads.
    const socket = (viewer.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    const stepOne = new Writer().uint(0).uint(0).bytes(Y.encodeStateVector(new Y.Doc())).finish();
    for (let i = 0; i < 2000; i++) {
      viewer.ws.send(Uint8Array.from([3]));
      viewer.ws.send(stepOne);
    }
    await sleep(1000);
    socket.resume();
    await sleep(1000);
    // What it had before, and one answer of each kind.
    expect(awarenessFrames()).toBe(before + 1);
    expect(viewer.messages.filter((m) => typeof m !== "string" && m[0] === 0 && m[1] === 1)).toHaveLength(1);
  });

  it("a valid update of 1M one-character items is refused with 1007 and nothing is stored; editing carries on", async () => {
    const name = fresh("bomb");
    const a = provider(name);
    const b = provider(name);
    await Promise.all([synced(a), synced(b)]);
    a.doc.getText("body").insert(0, "before");
    await eventually(async () => expect(await (await route(name, "text")).text()).toBe("before"));
    const attacker = rawSocket(name);
    await attacker.opened;
    attacker.ws.send(new Writer().uint(0).uint(2).bytes(bomb(1_000_000)).finish());
    expect(await attacker.closed).toBe(1007);
    const size = (await (await route(name, "size")).json()) as { length: number; snapshotBytes: number; updateBytes: number };
    expect(size.length).toBe(6);
    expect(size.snapshotBytes + size.updateBytes).toBeLessThan(1000);
    a.doc.getText("body").insert(6, " and after");
    await eventually(() => expect(body(b)).toBe("before and after"));
    await evict(name, "evict-yjs");
    expect(await (await route(name, "text")).text()).toBe("before and after");
  }, 60_000);

  it("a malformed message closes only its sender with 1007; the document and other clients are unaffected", async () => {
    const name = fresh("malformed");
    const a = provider(name);
    await synced(a);
    a.doc.getText("body").insert(0, "intact");
    await eventually(async () => expect(await (await route(name, "text")).text()).toBe("intact"));
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const bad = rawSocket(name);
    await bad.opened;
    bad.ws.send(Uint8Array.from([0, 2, 5, 1, 2]));
    expect(await bad.closed).toBe(1007);
    const garbage = rawSocket(name);
    await garbage.opened;
    garbage.ws.send(Uint8Array.from([0, 2, 4, 255, 255, 255, 255]));
    expect(await garbage.closed).toBe(1007);
    a.doc.getText("body").insert(6, "!");
    await eventually(async () => expect(await (await route(name, "text")).text()).toBe("intact!"));
    await evict(name, "evict-yjs");
    expect(await (await route(name, "text")).text()).toBe("intact!");
    expect(warn).not.toHaveBeenCalledWith(expect.stringContaining("Permission denied"));
  });
});

describe("dokit/yjs with y-partyserver's provider", () => {
  it("YProvider connects with its prefix option and syncs with a y-websocket provider", async () => {
    const name = fresh("party");
    const doc = new Y.Doc();
    const party = new YProvider(worker().host, name, doc, {
      prefix: `/agents/yjs-notes/${name}/yjs`,
      // SAFETY: `ws` implements the WebSocket the provider uses.
      WebSocketPolyfill: WebSocket as unknown as typeof globalThis.WebSocket,
      disableBc: true,
    });
    onTestFinished(() => party.destroy());
    const other = provider(name);
    await Promise.all([synced(party), synced(other)]);
    doc.getText("body").insert(0, "from partyserver");
    await eventually(() => expect(body(other)).toBe("from partyserver"));
    other.doc.getText("body").insert(0, "y-websocket, ");
    await eventually(() => expect(doc.getText("body").toString()).toBe("y-websocket, from partyserver"));
  });

  it("YProvider's document survives an eviction and an abort; the providers reconnect and keep syncing", async () => {
    const name = fresh("party-durable");
    const party = (doc: Y.Doc) => {
      const made = new YProvider(worker().host, name, doc, {
        prefix: `/agents/yjs-notes/${name}/yjs`,
        // SAFETY: `ws` implements the WebSocket the provider uses.
        WebSocketPolyfill: WebSocket as unknown as typeof globalThis.WebSocket,
        disableBc: true,
        maxBackoffTime: 200,
      });
      onTestFinished(() => made.destroy());
      return made;
    };
    const first = party(new Y.Doc());
    const watcher = party(new Y.Doc());
    await Promise.all([synced(first), synced(watcher)]);
    first.doc.getText("body").insert(0, "before eviction");
    await eventually(() => expect(body(watcher)).toBe("before eviction"));
    await evict(name, "evict-yjs");
    first.doc.getText("body").insert(0, "after; ");
    await eventually(() => expect(body(watcher)).toBe("after; before eviction"));
    // An abort drops every socket; both providers reconnect by themselves and carry on.
    let closes = 0;
    for (const made of [first, watcher]) made.on("connection-close", () => closes++);
    await route(name, "abort", { method: "POST" }).catch(() => undefined);
    await eventually(() => expect(closes).toBe(2));
    await eventually(() => expect(first.wsconnected && watcher.wsconnected && first.synced && watcher.synced).toBe(true), { timeout: 10_000 });
    watcher.doc.getText("body").insert(0, "reconnected; ");
    await eventually(() => expect(body(first)).toBe("reconnected; after; before eviction"));
    first.destroy();
    watcher.destroy();
    await evict(name, "evict-yjs");
    // A new provider, whose only source is the object: everything was stored.
    const late = party(new Y.Doc());
    await synced(late);
    expect(body(late)).toBe("reconnected; after; before eviction");
  });

  it("YProvider's own URL form (/parties/<party>/<room>) reaches an object whose document is on its own URL", async () => {
    const name = fresh("party-default");
    const docs = [new Y.Doc(), new Y.Doc()];
    const parties = docs.map((doc) => {
      const party = new YProvider(worker().host, name, doc, {
        party: "yjs-party",
        // SAFETY: `ws` implements the WebSocket the provider uses.
        WebSocketPolyfill: WebSocket as unknown as typeof globalThis.WebSocket,
        disableBc: true,
      });
      onTestFinished(() => party.destroy());
      return party;
    });
    await Promise.all(parties.map(synced));
    docs[0]?.getText("body").insert(0, "one party");
    await eventually(() => expect(docs[1]?.getText("body").toString()).toBe("one party"));
    expect(await (await fetch(new URL(`/parties/yjs-party/${name}`, worker()))).text()).toBe("one party");
  });
});
