import { env, exports } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import * as awarenessProtocol from "y-protocols/awareness";
import { describe, expect, it, vi } from "vitest";
import * as Y from "yjs";
import { isDokitError } from "../../src/lifecycle";
import { expectHibernates, openSocket, type TestSocket } from "../../src/testing";
import { readAwareness, writeAwareness } from "../../src/yjs/awareness";
import { countStructs } from "../../src/yjs/bounds";
import { splitUpdate } from "../../src/yjs/chunks";
import { idTag, pluginTag } from "../../src/websockets/tags";
import { Reader, Writer } from "../../src/yjs/wire";
import { YjsDocument } from "../../src/yjs";
import { fresh } from "../helpers";
import type { YjsDoc } from "./objects";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: { fetch(input: Request | string, init?: RequestInit): Promise<Response> } }).default;
const stubOf = (name: string) => env.YJS_DOC.getByName(name);

/** Opens a Yjs connection on `/agents/<agent>/<name>/yjs` (YjsDoc unless told) and reads the server's sync step 1. */
async function open(name: string, query: Record<string, string> = {}, agent = "yjs-doc"): Promise<TestSocket> {
  const socket = await openSocket(worker, `http://example.com/agents/${agent}/${name}/yjs`, { query });
  const first = await nextBytes(socket);
  expect([...first.subarray(0, 2)]).toEqual([0, 0]);
  return socket;
}

/** @returns the next message as bytes (the test socket's client end receives binary as a Blob) */
async function nextBytes(socket: TestSocket): Promise<Uint8Array> {
  const message: unknown = await socket.next();
  if (message instanceof Blob) return new Uint8Array(await message.arrayBuffer());
  if (message instanceof ArrayBuffer) return new Uint8Array(message);
  throw new Error(`expected a binary message, got ${JSON.stringify(message)}`);
}

/** @returns `[0, 2, update]` as the ArrayBuffer a TestSocket sends as binary */
function updateMessage(update: Uint8Array): ArrayBuffer {
  return new Writer().uint(0).uint(2).bytes(update).finish().slice().buffer;
}

/** @returns one update per word appended to the text `body` of a client document */
function edits(words: string[]): Uint8Array[] {
  const doc = new Y.Doc();
  const updates: Uint8Array[] = [];
  doc.on("update", (update: Uint8Array) => updates.push(update));
  for (const word of words) doc.getText("body").insert(doc.getText("body").length, word);
  return updates;
}

/**
 * @returns a valid v1 update of `count` one-character items of client `client` in the text `body`, each
 *   inserted before the one before it, so Yjs cannot merge them (about 7 bytes each, and 190 of heap once applied)
 */
function bomb(count: number, client = 1): Uint8Array {
  const writer = new Writer().uint(1).uint(count).uint(client).uint(0);
  // The first: no neighbours, its parent the root type "body" (info 4: a string, parent named).
  writer.uint(4).uint(1).string("body").string("a");
  // Each next one: info 0x44 (a string with a right origin), the right origin (client, clock - 1).
  for (let clock = 1; clock < count; clock++) writer.uint(0x44).uint(client).uint(clock - 1).string("a");
  return writer.uint(0).finish();
}

const rows = (name: string, namespace: "YJS_DOC" | "YJS_CAPPED" = "YJS_DOC") =>
  runInDurableObject(env[namespace].getByName(name) as DurableObjectStub, (_instance: unknown, state) => ({
    snapshot: state.storage.sql.exec<{ n: number; max: number | null }>("SELECT count(*) AS n, max(length(data)) AS max FROM _dokit_yjs_snapshot").one(),
    updates: state.storage.sql.exec<{ n: number; max: number | null }>("SELECT count(*) AS n, max(length(data)) AS max FROM _dokit_yjs_updates").one(),
  }));

describe("the y-protocols wire codec", () => {
  it("writes what lib0 reads and reads what lib0 writes (numbers up to 2^53 - 1, byte arrays, strings)", () => {
    const numbers = [0, 1, 127, 128, 16_383, 16_384, 2 ** 31, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER];
    const ours = new Writer();
    for (const n of numbers) ours.uint(n);
    ours.bytes(Uint8Array.from([1, 2, 3])).string("héllo ✓");
    const decoder = decoding.createDecoder(ours.finish());
    for (const n of numbers) expect(decoding.readVarUint(decoder)).toBe(n);
    expect([...decoding.readVarUint8Array(decoder)]).toEqual([1, 2, 3]);
    expect(decoding.readVarString(decoder)).toBe("héllo ✓");

    const theirs = encoding.createEncoder();
    for (const n of numbers) encoding.writeVarUint(theirs, n);
    encoding.writeVarString(theirs, "ünïcode");
    const reader = new Reader(encoding.toUint8Array(theirs));
    for (const n of numbers) expect(reader.uint()).toBe(n);
    expect(reader.string()).toBe("ünïcode");
    expect(reader.done).toBe(true);
  });

  it("reads and writes y-protocols awareness updates", () => {
    const doc = new Y.Doc();
    const awareness = new awarenessProtocol.Awareness(doc);
    awareness.setLocalState({ name: "ada", cursor: 3 });
    const update = awarenessProtocol.encodeAwarenessUpdate(awareness, [doc.clientID]);
    awareness.destroy();
    const entries = readAwareness(update);
    expect(entries).toEqual([[doc.clientID, 1, '{"name":"ada","cursor":3}']]);
    const other = new awarenessProtocol.Awareness(new Y.Doc());
    awarenessProtocol.applyAwarenessUpdate(other, writeAwareness(entries), "test");
    expect(other.getStates().get(doc.clientID)).toEqual({ name: "ada", cursor: 3 });
    other.destroy();
  });

  it("refuses a message cut short", () => {
    expect(() => new Reader(Uint8Array.from([0x80])).uint()).toThrow(/ends inside a number/);
    expect(() => new Reader(Uint8Array.from([5, 1])).bytes()).toThrow(/ends inside a byte array/);
  });
});

describe("a large update cut for WebSocket messages", () => {
  /** A document of two clients: long ASCII and emoji texts (one item each), a map, deletions. */
  function bigDocument(): Y.Doc {
    const doc = new Y.Doc();
    const other = new Y.Doc();
    other.getText("body").insert(0, "a".repeat(3 * 1024 * 1024));
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(other));
    doc.getText("emoji").insert(0, "😀".repeat(700_000));
    doc.getMap("meta").set("title", "big");
    doc.getArray("list").insert(0, [1, { two: 2 }, "three"]);
    doc.getText("body").delete(1000, 5000);
    doc.getText("body").insert(2000, "inserted");
    return doc;
  }

  it("cuts an update into pieces under the bound that rebuild the document in order and in reverse", () => {
    const doc = bigDocument();
    const update = Y.encodeStateAsUpdate(doc);
    const pieces = splitUpdate(update, 1024 * 1024);
    expect(pieces.length).toBeGreaterThanOrEqual(6);
    for (const piece of pieces) expect(piece.byteLength).toBeLessThanOrEqual(1024 * 1024);
    for (const order of [pieces, [...pieces].reverse()]) {
      const copy = new Y.Doc();
      for (const piece of order) Y.applyUpdate(copy, piece);
      expect(copy.getText("body").toString()).toBe(doc.getText("body").toString());
      expect(copy.getText("emoji").toString()).toBe(doc.getText("emoji").toString());
      expect(copy.getText("emoji").toString().includes("\uFFFD")).toBe(false);
      expect(copy.getMap("meta").toJSON()).toEqual({ title: "big" });
      expect(copy.getArray("list").toJSON()).toEqual([1, { two: 2 }, "three"]);
      expect(Y.encodeStateVector(copy)).toEqual(Y.encodeStateVector(doc));
    }
  });

  it("leaves an update under the bound as it is", () => {
    const update = Y.encodeStateAsUpdate(bigDocument());
    expect(splitUpdate(update, update.byteLength)).toEqual([update]);
  });
});

describe("YjsDocument storage", () => {
  it("stores a large update in parts of at most 1 MiB, and compacts into a snapshot split the same way", async () => {
    const name = fresh("rows");
    const socket = await open(name);
    const doc = new Y.Doc();
    doc.getText("body").insert(0, "x".repeat(3 * 1024 * 1024 + 5));
    socket.send(updateMessage(Y.encodeStateAsUpdate(doc)));
    socket.send(updateMessage(edits(["!"])[0] as Uint8Array));
    // The 3 MiB update went past the 1 MiB byte threshold: compacted at once.
    await expect.poll(async () => (await rows(name)).snapshot.n).toBe(4);
    const stored = await rows(name);
    expect(stored.snapshot.max).toBeLessThanOrEqual(1024 * 1024);
    await evictDurableObject(stubOf(name));
    const length = await runInDurableObject(stubOf(name), (instance: YjsDoc) => instance.doc.getText("body").length);
    expect(length).toBeGreaterThanOrEqual(3 * 1024 * 1024 + 5);
    await socket.close();
  });

  it("appends each update before answering, and compacts after the configured number of updates", async () => {
    const name = fresh("compact");
    const socket = await open(name);
    const watcher = await open(name);
    const updates = edits(["a", "b", "c", "d", "e", "f", "g"]);
    for (const [i, update] of updates.slice(0, 4).entries()) {
      socket.send(updateMessage(update));
      await watcher.next(); // relayed only once stored
      expect((await rows(name)).updates.n).toBe(i + 1);
    }
    socket.send(updateMessage(updates[4] as Uint8Array));
    await watcher.next();
    // The fifth update: the tail is folded into the snapshot in one transaction.
    expect(await rows(name)).toMatchObject({ updates: { n: 0 }, snapshot: { n: 1 } });
    for (const update of updates.slice(5)) socket.send(updateMessage(update));
    await watcher.next();
    await watcher.next();
    expect((await rows(name)).updates.n).toBe(2);
    await evictDurableObject(stubOf(name));
    expect(await runInDurableObject(stubOf(name), (instance: YjsDoc) => instance.doc.getText("body").toString())).toBe("abcdefg");
    await socket.close();
    await watcher.close();
  });

  it("relays an update as [0, 2, update] whatever carried it: a sync answer, an update, an update followed by stray bytes", async () => {
    const name = fresh("relay");
    const socket = await open(name);
    const watcher = await open(name);
    const [first, second, third] = edits(["a", "b", "c"]) as [Uint8Array, Uint8Array, Uint8Array];
    const expected = (update: Uint8Array) => [...new Writer().uint(0).uint(2).bytes(update).finish()];
    // [0, 1, update]: a client's answer to the server's step 1
    socket.send(new Writer().uint(0).uint(1).bytes(first).finish().slice().buffer);
    expect([...(await nextBytes(watcher))]).toEqual(expected(first));
    socket.send(updateMessage(second));
    expect([...(await nextBytes(watcher))]).toEqual(expected(second));
    // Bytes after the update are not the wire's: the others get the update alone.
    socket.send(new Writer().uint(0).uint(2).bytes(third).uint(7).finish().slice().buffer);
    expect([...(await nextBytes(watcher))]).toEqual(expected(third));
    expect(await runInDurableObject(stubOf(name), (instance: YjsDoc) => instance.doc.getText("body").toString())).toBe("abc");
    await socket.close();
    await watcher.close();
  });

  it("loads the document lazily after a wake: a request that does not need it leaves it on disk", async () => {
    const name = fresh("lazy");
    const socket = await open(name);
    socket.send(updateMessage(edits(["kept"])[0] as Uint8Array));
    await expect.poll(async () => (await rows(name)).updates.n).toBe(1);
    await evictDurableObject(stubOf(name));
    // Measured in SQL, not loaded.
    expect(await runInDurableObject(stubOf(name), (instance: YjsDoc) => [instance.doc.storedSize().updates, instance.doc.loaded])).toEqual([1, false]);
    // The first message that needs it loads snapshot and tail.
    const sv = new Writer().uint(0).uint(0).bytes(Y.encodeStateVector(new Y.Doc())).finish().slice().buffer;
    socket.send(sv);
    const answer = await nextBytes(socket);
    const client = new Y.Doc();
    const reader = new Reader(answer);
    expect([reader.uint(), reader.uint()]).toEqual([0, 1]);
    Y.applyUpdate(client, reader.bytes());
    expect(client.getText("body").toString()).toBe("kept");
    expect(await runInDurableObject(stubOf(name), (instance: YjsDoc) => instance.doc.loaded)).toBe(true);
    await socket.close();
  });

  it("answers one of 2,000 sync step 1 requests sent at once, and a repeat once the document changed", async () => {
    const name = fresh("sync-repeat");
    const writer = await open(name);
    writer.send(updateMessage(edits(["x".repeat(10_000)])[0] as Uint8Array));
    await expect.poll(async () => (await rows(name)).updates.n).toBe(1);
    const viewer = await open(name, { mode: "view" });
    const stepOne = new Writer().uint(0).uint(0).bytes(Y.encodeStateVector(new Y.Doc())).finish().slice().buffer;
    for (let i = 0; i < 2000; i++) viewer.send(stepOne);
    const answers = await viewer.drain(500);
    expect(answers).toHaveLength(1);
    // SAFETY: the test socket's client end receives binary as a Blob (see nextBytes).
    const answer = new Reader(new Uint8Array(await (answers[0] as unknown as Blob).arrayBuffer()));
    expect([answer.uint(), answer.uint()]).toEqual([0, 1]);
    // Nothing new: not answered again; after a change (relayed to it) and a second, answered.
    viewer.send(stepOne);
    expect(await viewer.drain(100)).toEqual([]);
    writer.send(updateMessage(edits(["y"])[0] as Uint8Array));
    await nextBytes(viewer);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    viewer.send(stepOne);
    const again = new Reader(await nextBytes(viewer));
    expect([again.uint(), again.uint()]).toEqual([0, 1]);
    await writer.close();
    await viewer.close();
  });

  it("loads past a stored update that no longer applies (a row altered by hand), and logs it", async () => {
    const name = fresh("altered");
    const socket = await open(name);
    const [first, second] = edits(["one ", "two"]);
    socket.send(updateMessage(first as Uint8Array));
    await expect.poll(async () => (await rows(name)).updates.n).toBe(1);
    await runInDurableObject(stubOf(name), (_instance: YjsDoc, state) => {
      state.storage.sql.exec("INSERT INTO _dokit_yjs_updates (seq, part, data) VALUES (1000, 0, ?)", Uint8Array.from([255, 255, 255, 255]));
    });
    await evictDurableObject(stubOf(name));
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    socket.send(updateMessage(second as Uint8Array));
    await expect.poll(() => runInDurableObject(stubOf(name), (instance: YjsDoc) => instance.doc.getText("body").toString())).toBe("one two");
    expect(logged).toHaveBeenCalledWith("dokit: YjsDocument left out a stored update it cannot apply", expect.anything());
    logged.mockRestore();
    await socket.close();
  });

  it("hibernates once idle: nothing the document holds keeps the object awake", async () => {
    const name = fresh("sleeps");
    const socket = await open(name);
    socket.send(updateMessage(edits(["zz"])[0] as Uint8Array));
    await expect.poll(async () => (await rows(name)).updates.n).toBe(1);
    const { result } = await expectHibernates(stubOf(name), {
      next: () => runInDurableObject(stubOf(name), (instance: YjsDoc) => instance.doc.getText("body").toString()),
    });
    expect(result).toBe("zz");
    await socket.close();
  }, 30_000);
});

describe("YjsDocument fan-out", () => {
  it("sends updates to exactly the Yjs connections, found through the platform's tag index without reading another connection, also after an eviction", async () => {
    const name = fresh("fanout");
    const a = await open(name, { _pk: "a" });
    const b = await open(name, { _pk: "b" });
    // A JSON-protocol connection of the same object.
    const json = await openSocket(worker, `http://example.com/agents/yjs-doc/${name}`, { query: { _pk: "json" } });
    await json.frames(1);
    // Tagged for the plug-in on accept: the tag index lists the two Yjs connections, not the other.
    const tagged = await runInDurableObject(stubOf(name), (_instance: YjsDoc, state) =>
      state.getWebSockets(pluginTag("yjs")).map((ws) => state.getTags(ws).filter((tag) => tag !== pluginTag("yjs"))),
    );
    expect(tagged.sort()).toEqual([[idTag("a")], [idTag("b")]]);

    // After an eviction, a client's update reaches the other Yjs connection (not its sender).
    const [first] = edits(["one"]);
    await evictDurableObject(stubOf(name));
    a.send(updateMessage(first as Uint8Array));
    expect([...(await nextBytes(b))]).toEqual([...new Uint8Array(updateMessage(first as Uint8Array))]);

    // After another, a server-side change reaches both, and the JSON connection's attachment is never read.
    await evictDurableObject(stubOf(name));
    const reads = await runInDurableObject(stubOf(name), (instance: YjsDoc, state) => {
      const read = WebSocket.prototype.deserializeAttachment;
      let count = 0;
      WebSocket.prototype.deserializeAttachment = function (this: WebSocket) {
        if (state.getTags(this).includes(idTag("json"))) count++;
        return read.call(this);
      };
      try {
        instance.doc.getText("body").insert(0, "server ");
      } finally {
        WebSocket.prototype.deserializeAttachment = read;
      }
      return count;
    });
    expect(reads).toBe(0);
    for (const socket of [a, b]) {
      // Each has "one" (a wrote it, b was sent it); the next message is the server's change alone.
      const client = new Y.Doc();
      Y.applyUpdate(client, first as Uint8Array);
      const reader = new Reader(await nextBytes(socket));
      expect([reader.uint(), reader.uint()]).toEqual([0, 2]);
      Y.applyUpdate(client, reader.bytes());
      expect(client.getText("body").toString()).toBe("server one");
    }
    expect(await json.drain(100)).toEqual([]);
    for (const socket of [a, b, json]) await socket.close();
  });
});

describe("YjsDocument awareness", () => {
  const awarenessOf = (entries: [number, number, string][]) => new Writer().uint(1).bytes(writeAwareness(entries)).finish().slice().buffer;
  /** @returns the entries of the next awareness message */
  async function nextAwareness(socket: TestSocket): Promise<[number, number, string][]> {
    const reader = new Reader(await nextBytes(socket));
    expect(reader.uint()).toBe(1);
    return readAwareness(reader.bytes());
  }

  it("relays a state over the budget without keeping it, and still announces its client leaving", async () => {
    const name = fresh("aw-big");
    const watcher = await open(name);
    const talker = await open(name);
    const big = JSON.stringify({ name: "x".repeat(5000) });
    talker.send(awarenessOf([[7, 1, big]]));
    expect(await nextAwareness(watcher)).toEqual([[7, 1, big]]);
    // A removal of a client nobody speaks for (a y-protocols client passes on those it timed out) is no news.
    talker.send(awarenessOf([[99, 4, "null"]]));
    // A newcomer is not sent the state that was not kept.
    const late = await open(name);
    expect(await late.drain(100)).toEqual([]);
    await talker.close();
    expect(await nextAwareness(watcher)).toEqual([[7, 2, "null"]]);
    expect(await nextAwareness(late)).toEqual([[7, 2, "null"]]);
    await watcher.close();
    await late.close();
  });

  it("a client that reconnects before its old socket closes takes its id back once that socket closes", async () => {
    const name = fresh("aw-reconnect");
    const watcher = await open(name);
    const before = await open(name);
    before.send(awarenessOf([[8, 1, '{"at":1}']]));
    expect(await nextAwareness(watcher)).toEqual([[8, 1, '{"at":1}']]);
    const after = await open(name);
    await after.drain(100); // everyone's awareness, client 8's included
    // Client 8 belongs to the open connection that introduced it: the new one cannot speak for it yet.
    after.send(awarenessOf([[8, 2, '{"at":2}']]));
    expect(await watcher.drain(200)).toEqual([]);
    await before.close();
    // Everyone hears client 8 left, the reconnected client too: y-protocols answers its own removal by
    // announcing itself again, and the id is then the new connection's.
    expect(await nextAwareness(watcher)).toEqual([[8, 2, "null"]]);
    expect(await nextAwareness(after)).toEqual([[8, 2, "null"]]);
    after.send(awarenessOf([[8, 3, '{"at":2}']]));
    expect(await nextAwareness(watcher)).toEqual([[8, 3, '{"at":2}']]);
    await after.close();
    expect(await nextAwareness(watcher)).toEqual([[8, 4, "null"]]);
    await watcher.close();
  });

  it("a connection cannot set, silence or remove a client another introduced, whatever the clock, also after an eviction", async () => {
    const name = fresh("aw-forge");
    const watcher = await open(name);
    const victim = await open(name);
    const attacker = await open(name);
    victim.send(awarenessOf([[5, 1, '{"name":"ada"}']]));
    expect(await nextAwareness(watcher)).toEqual([[5, 1, '{"name":"ada"}']]);
    await attacker.drain(100);
    const forge = async () => {
      attacker.send(awarenessOf([[5, Number.MAX_SAFE_INTEGER, '{"name":"mallory"}']]));
      attacker.send(awarenessOf([[5, Number.MAX_SAFE_INTEGER, "null"]]));
      // Mixed with its own client: only its own entry goes on.
      attacker.send(awarenessOf([[5, Number.MAX_SAFE_INTEGER - 1, '{"name":"mallory"}'], [66, 1, '{"name":"eve"}']]));
      expect(await nextAwareness(watcher)).toEqual([[66, 1, '{"name":"eve"}']]);
      expect(await watcher.drain(100)).toEqual([]);
    };
    await forge();
    // The real client's next update still goes through, at its own clock.
    victim.send(awarenessOf([[5, 2, '{"name":"ada","cursor":1}']]));
    expect(await nextAwareness(watcher)).toEqual([[5, 2, '{"name":"ada","cursor":1}']]);
    await evictDurableObject(stubOf(name));
    const late = await open(name);
    expect((await nextAwareness(late)).sort((a, b) => a[0] - b[0])).toEqual([
      [5, 2, '{"name":"ada","cursor":1}'],
      [66, 1, '{"name":"eve"}'],
    ]);
    attacker.send(awarenessOf([[66, 2, '{"name":"eve"}']]));
    expect(await nextAwareness(watcher)).toEqual([[66, 2, '{"name":"eve"}']]);
    attacker.send(awarenessOf([[5, Number.MAX_SAFE_INTEGER, '{"name":"mallory"}']]));
    victim.send(awarenessOf([[5, 3, '{"name":"ada","cursor":2}']]));
    expect(await nextAwareness(watcher)).toEqual([[5, 3, '{"name":"ada","cursor":2}']]);
    const kept = await runInDurableObject(stubOf(name), (instance: YjsDoc) => instance.doc.getConnections().flatMap((c) => instance.doc.getAwareness(c)));
    expect(kept.sort((a, b) => a.clientID - b.clientID)).toEqual([
      { clientID: 5, state: { name: "ada", cursor: 2 } },
      { clientID: 66, state: { name: "eve" } },
    ]);
    // A client's removal comes from its own connection only: here, when it closes.
    await victim.close();
    expect(await nextAwareness(watcher)).toEqual([[5, 4, "null"]]);
    for (const socket of [watcher, attacker, late]) await socket.close();
  });

  it("does not take a new id from a connection whose attachment has no room to keep it (it could not be defended after a wake)", async () => {
    const name = fresh("aw-full");
    const watcher = await open(name);
    const full = await open(name, { _pk: "full" });
    await runInDurableObject(stubOf(name), (instance: YjsDoc) => {
      // The largest state the attachment takes, so that nothing more fits beside dokit's own flags.
      const connection = instance.webSockets.getConnection("full");
      for (let size = 16_384; size > 0; size -= 4) {
        try {
          connection?.setState("x".repeat(size));
          break;
        } catch {}
      }
    });
    full.send(awarenessOf([[31, 1, '{"a":1}']]));
    expect(await watcher.drain(150)).toEqual([]);
    // Nobody owns it: another connection may introduce it.
    const other = await open(name);
    other.send(awarenessOf([[31, 1, '{"b":1}']]));
    expect(await nextAwareness(watcher)).toEqual([[31, 1, '{"b":1}']]);
    for (const socket of [watcher, full, other]) await socket.close();
  });

  it("a readonly connection publishes its own awareness and cannot touch another's", async () => {
    const name = fresh("aw-viewer");
    const writer = await open(name);
    const viewer = await open(name, { mode: "view" });
    writer.send(awarenessOf([[11, 1, '{"name":"writer"}']]));
    expect(await nextAwareness(viewer)).toEqual([[11, 1, '{"name":"writer"}']]);
    viewer.send(awarenessOf([[12, 1, '{"name":"viewer"}']]));
    expect(await nextAwareness(writer)).toEqual([[12, 1, '{"name":"viewer"}']]);
    viewer.send(awarenessOf([[11, 9, "null"]]));
    viewer.send(awarenessOf([[11, 10, '{"name":"forged"}']]));
    expect(await writer.drain(150)).toEqual([]);
    await viewer.close();
    expect(await nextAwareness(writer)).toEqual([[12, 2, "null"]]);
    await writer.close();
  });

  it("bounds the clients one connection and the document speak for, and forgets a closed connection's", async () => {
    const name = fresh("aw-caps");
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const watcher = await open(name, {}, "yjs-capped");
    const flooder = await open(name, {}, "yjs-capped");
    // 10,000 ids in one message: the first 2 are taken (2 per connection), the rest are not relayed or kept.
    const ids = Array.from({ length: 10_000 }, (_, i): [number, number, string] => [1000 + i, 1, "{}"]);
    flooder.send(awarenessOf(ids));
    expect(await nextAwareness(watcher)).toEqual([
      [1000, 1, "{}"],
      [1001, 1, "{}"],
    ]);
    expect(await watcher.drain(100)).toEqual([]);
    const other = await open(name, {}, "yjs-capped");
    await other.drain(100);
    // 3 per document: one more fits, the next does not.
    other.send(awarenessOf([[7, 1, "{}"], [8, 1, "{}"]]));
    expect(await nextAwareness(watcher)).toEqual([[7, 1, "{}"]]);
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/^dokit: YjsDocument ignores new awareness clients .*logged once$/));
    expect(warn).toHaveBeenCalledTimes(1);
    // Closed: its clients leave and are forgotten, so others may introduce ids again (the same ones too).
    await flooder.close();
    for (const socket of [watcher, other]) {
      expect(await nextAwareness(socket)).toEqual([
        [1000, 2, "null"],
        [1001, 2, "null"],
      ]);
    }
    other.send(awarenessOf([[8, 1, "{}"], [1000, 5, "{}"]]));
    expect(await nextAwareness(watcher)).toEqual([[8, 1, "{}"]]);
    watcher.send(awarenessOf([[1000, 5, "{}"]]));
    expect(await nextAwareness(other)).toEqual([[1000, 5, "{}"]]);
    warn.mockRestore();
    for (const socket of [watcher, other]) await socket.close();
  });

  it("answers one of 2,000 awareness queries sent at once, and answers again once something changed", async () => {
    const name = fresh("aw-queries");
    const talker = await open(name);
    talker.send(awarenessOf([[5, 1, JSON.stringify({ name: "x".repeat(3000) })]]));
    const reader = await open(name);
    expect(await nextAwareness(reader)).toHaveLength(1);
    const viewer = await open(name, { mode: "view" });
    await viewer.drain(100);
    for (let i = 0; i < 2000; i++) viewer.send(Uint8Array.from([3]).buffer);
    const answers = await viewer.drain(500);
    expect(answers).toHaveLength(1);
    // Asked again with nothing new: not answered; after a change and a second, answered.
    viewer.send(Uint8Array.from([3]).buffer);
    expect(await viewer.drain(100)).toEqual([]);
    talker.send(awarenessOf([[5, 2, '{"name":"y"}']]));
    expect(await nextAwareness(viewer)).toEqual([[5, 2, '{"name":"y"}']]);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    viewer.send(Uint8Array.from([3]).buffer);
    expect(await nextAwareness(viewer)).toEqual([[5, 2, '{"name":"y"}']]);
    for (const socket of [talker, reader, viewer]) await socket.close();
  });

  it("sends a newcomer the kept states, and answers an awareness query with them", async () => {
    const name = fresh("aw-small");
    const talker = await open(name);
    talker.send(awarenessOf([[5, 3, '{"cursor":1}']]));
    await expect.poll(async () => {
      const probe = await open(name);
      const entries = await nextAwareness(probe);
      await probe.close();
      return entries;
    }).toEqual([[5, 3, '{"cursor":1}']]);
    talker.send(Uint8Array.from([3]).buffer);
    expect(await nextAwareness(talker)).toEqual([[5, 3, '{"cursor":1}']]);
    // What a provider sends back of what it heard (the same clock) is not news: not relayed, not kept.
    const echo = await open(name);
    expect(await nextAwareness(echo)).toEqual([[5, 3, '{"cursor":1}']]);
    echo.send(awarenessOf([[5, 3, '{"cursor":1}']]));
    echo.send(awarenessOf([[6, 1, '{"cursor":2}']]));
    expect(await nextAwareness(talker)).toEqual([[6, 1, '{"cursor":2}']]);
    await echo.close();
    expect(await nextAwareness(talker)).toEqual([[6, 2, "null"]]);
    await talker.close();
  });
});

describe("YjsDocument update bounds", () => {
  /** @returns how the socket closed, once it has */
  const closedWith = async (socket: TestSocket) => {
    const { code, reason } = await socket.closed;
    return { code, reason };
  };

  it("counts an update's structs and deleted ranges as Yjs reads them, and stops past a limit", () => {
    const doc = new Y.Doc();
    doc.getText("body").insert(0, "hello world");
    doc.getMap("meta").set("title", { nested: [1, 2n, null, true, "x", new Uint8Array([1])] });
    doc.getArray("list").insert(0, [1, "two", { three: 3 }]);
    doc.getXmlFragment("xml").insert(0, [new Y.XmlElement("p"), new Y.XmlText("t")]);
    const withoutDeletes = Y.encodeStateAsUpdate(doc);
    expect(countStructs(withoutDeletes)).toBe(Y.decodeUpdate(withoutDeletes).structs.length);
    doc.getText("body").delete(2, 3);
    doc.getText("body").delete(0, 1);
    const update = Y.encodeStateAsUpdate(doc);
    const decoded = Y.decodeUpdate(update);
    const ranges = [...decoded.ds.clients.values()].reduce((sum, list) => sum + list.length, 0);
    expect(ranges).toBeGreaterThan(0);
    expect(countStructs(update)).toBe(decoded.structs.length + 2 * ranges);
    expect(countStructs(bomb(1000))).toBe(1000);
    expect(countStructs(bomb(1000), 10)).toBe(11);
    // The generator writes what Yjs reads: 1,000 items it cannot merge.
    const bombed = new Y.Doc();
    Y.applyUpdate(bombed, bomb(1000));
    expect(bombed.getText("body").toString()).toBe("a".repeat(1000));
    expect(bombed.store.clients.get(1)).toHaveLength(1000);
  });

  it("refuses a valid update of 1M one-character items with 1007 before storing it; editing carries on", async () => {
    const name = fresh("bomb");
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const writer = await open(name);
    const attacker = await open(name);
    const update = bomb(1_000_000);
    expect(update.byteLength).toBeLessThan(8 * 1024 * 1024); // under maxUpdateBytes: the struct count refuses it
    attacker.send(updateMessage(update));
    expect(await closedWith(attacker)).toEqual({ code: 1007, reason: "Yjs update too large" });
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/closed connection .*: an update of more than 50000 structs is over maxUpdateStructs/));
    expect(await rows(name)).toMatchObject({ updates: { n: 0 }, snapshot: { n: 0 } });
    writer.send(updateMessage(edits(["still here"])[0] as Uint8Array));
    await expect.poll(async () => (await rows(name)).updates.n).toBe(1);
    await evictDurableObject(stubOf(name));
    expect(await runInDurableObject(stubOf(name), (instance: YjsDoc) => instance.doc.getText("body").toString())).toBe("still here");
    warn.mockRestore();
    await writer.close();
  }, 60_000);

  it("refuses an update over maxUpdateBytes, over maxUpdateStructs, or one the document cannot take, storing nothing", async () => {
    const name = fresh("bounds");
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const refused = async (update: Uint8Array, detail: RegExp) => {
      const socket = await open(name, {}, "yjs-capped");
      socket.send(updateMessage(update));
      expect(await closedWith(socket)).toEqual({ code: 1007, reason: "Yjs update too large" });
      expect(warn).toHaveBeenLastCalledWith(expect.stringMatching(detail));
    };
    const text = new Y.Doc();
    text.getText("body").insert(0, "x".repeat(5000));
    await refused(Y.encodeStateAsUpdate(text), /an update of \d+ bytes is over maxUpdateBytes \(4096\)/);
    await refused(bomb(101, 2), /more than 100 structs is over maxUpdateStructs/);
    const writer = await open(name, {}, "yjs-capped");
    writer.send(updateMessage(bomb(100, 3)));
    await expect.poll(async () => (await rows(name, "YJS_CAPPED")).updates.n).toBe(1);
    // 100 held, 60 more would pass 150.
    await refused(bomb(60, 4), /the document would hold 160 structs, over maxDocumentStructs \(150\)/);
    expect((await rows(name, "YJS_CAPPED")).updates.n).toBe(1);
    // Within every bound: taken.
    writer.send(updateMessage(bomb(50, 5)));
    await expect.poll(async () => (await rows(name, "YJS_CAPPED")).updates.n).toBe(2);
    warn.mockRestore();
    await writer.close();
  });
});

describe("YjsDocument refusals", () => {
  it("tells a readonly connection its update is refused, stores nothing and relays nothing", async () => {
    const name = fresh("readonly");
    const writer = await open(name);
    const viewer = await open(name, { mode: "view" });
    viewer.send(updateMessage(edits(["nope"])[0] as Uint8Array));
    const denied = new Reader(await nextBytes(viewer));
    expect([denied.uint(), denied.uint(), denied.string()]).toEqual([2, 0, "Connection is readonly"]);
    expect(await writer.drain(100)).toEqual([]);
    expect((await rows(name)).updates.n).toBe(0);
    // WebSockets' own readonly flag counts too (here set later, from the server).
    const demoted = await open(name, { _pk: "demoted" });
    await runInDurableObject(stubOf(name), (instance: YjsDoc) => {
      const connection = instance.webSockets.getConnection("demoted");
      if (connection) instance.webSockets.setReadonly(connection);
    });
    demoted.send(updateMessage(edits(["nope"])[0] as Uint8Array));
    const told = new Reader(await nextBytes(demoted));
    expect([told.uint(), told.uint(), told.string()]).toEqual([2, 0, "Connection is readonly"]);
    expect((await rows(name)).updates.n).toBe(0);
    await demoted.close();
    await writer.close();
    await viewer.close();
  });

  it("refuses options out of range and a document nobody serves, with stable codes", async () => {
    expect(() => new YjsDocument({ path: "yjs" })).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    expect(() => new YjsDocument({ maxAwarenessBytes: 9000 })).toThrow(/maxAwarenessBytes must be 0 to 8192/);
    expect(() => new YjsDocument({ maxAwarenessClientsPerConnection: 0 })).toThrow(/maxAwarenessClientsPerConnection must be 1 to 64/);
    expect(() => new YjsDocument({ maxAwarenessClients: 0 })).toThrow(/maxAwarenessClients must be 1 to 100000/);
    expect(() => new YjsDocument({ maxUpdateBytes: 64 * 1024 * 1024 })).toThrow(/maxUpdateBytes must be 1024 to 33554432/);
    expect(() => new YjsDocument({ maxUpdateStructs: 0 })).toThrow(/maxUpdateStructs must be 1 to 10000000/);
    expect(() => new YjsDocument({ maxDocumentStructs: -1 })).toThrow(/maxDocumentStructs must be 1 to 10000000/);
    // A document no WebSockets serves is refused where it is used (the object's constructor), naming the fix.
    const error = await runInDurableObject(env.YJS_UNSERVED.getByName(fresh("unserved")), (instance) => instance.useDoc());
    expect(isDokitError(error) && error.code).toBe("NOT_INSTALLED");
    expect(isDokitError(error) && error.message).toMatch(/new WebSockets\(\{ yjs: doc \}\)/);
  });
});
