import { evictDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import * as Y from "yjs";
import type { InspectorSnapshot, YjsView } from "../../src/inspector";
import { openSocket, type TestSocket, type Upgrader } from "../../src/testing";
import { writeAwareness } from "../../src/yjs/awareness";
import { Writer } from "../../src/yjs/wire";
import { fresh } from "../helpers";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: Upgrader }).default;
const LOCAL = "http://localhost";

/** @returns the snapshot's Yjs section, editors in id order (the runtime lists sockets in no set order) */
async function snapshotOf(base: string): Promise<YjsView> {
  const view = ((await (await worker.fetch(`${base}/__dokit/snapshot`)).json()) as InspectorSnapshot).yjs;
  if (!view || "error" in view) throw new Error(`the snapshot's yjs section is ${JSON.stringify(view)}`);
  return { ...view, editors: view.editors.sort((a, b) => a.id.localeCompare(b.id)) };
}

/** Opens a Yjs connection with id `id` and reads the object's sync step 1. */
async function editor(base: string, id: string): Promise<TestSocket> {
  const socket = await openSocket(worker, `${base}/yjs`, { query: { _pk: id } });
  const first: unknown = await socket.next();
  const bytes = first instanceof Blob ? new Uint8Array(await first.arrayBuffer()) : new Uint8Array(first as ArrayBuffer);
  expect([...bytes.subarray(0, 2)]).toEqual([0, 0]);
  return socket;
}

/** Sends `[1, awareness]`: one client's state at clock 1 (a string is sent as the state's text, as it is). */
function publish(socket: TestSocket, clientID: number, state: unknown): void {
  const text = typeof state === "string" ? state : JSON.stringify(state);
  socket.send(new Writer().uint(1).bytes(writeAwareness([[clientID, 1, text]])).finish().slice().buffer);
}

/** Sends `[0, 2, update]`: `text` appended by a client of its own. @returns the update's size in bytes */
function type(socket: TestSocket, text: string): number {
  const doc = new Y.Doc();
  let update: Uint8Array = new Uint8Array();
  doc.on("update", (u: Uint8Array) => void (update = u));
  doc.getText("body").insert(0, text);
  socket.send(new Writer().uint(0).uint(2).bytes(update).finish().slice().buffer);
  return update.byteLength;
}

describe("Inspector: a Yjs document", () => {
  it("shows the stored size and the connected editors with their awareness, across a hibernation, without loading the document", async () => {
    const name = fresh("yjs");
    const base = `${LOCAL}/agents/yjs-inspected-room/${name}`;
    expect(await snapshotOf(base)).toEqual({ loaded: false, storedBytes: 0, size: { snapshotBytes: 0, updates: 0, updateBytes: 0 }, editors: [] });

    const ann = await editor(base, "ann");
    const bob = await editor(base, "bob");
    // A JSON-protocol connection on the same object: a connection, not an editor.
    const watcher = await openSocket(worker, base, { query: { _pk: "watcher" } });
    await watcher.nextJSON();
    publish(ann, 11, { user: { name: "Ann", color: "#aa0000" } });
    publish(bob, 22, { user: { name: "Bob", color: "#0000aa" } });
    const bytes = type(ann, "hello") + type(bob, "world");

    await expect.poll(async () => (await snapshotOf(base)).size.updates).toBe(2);
    const live = await snapshotOf(base);
    expect(live).toEqual({
      loaded: true,
      storedBytes: bytes,
      size: { snapshotBytes: 0, updates: 2, updateBytes: bytes },
      editors: [
        { id: "ann", awareness: [{ clientID: 11, state: { user: { name: "Ann", color: "#aa0000" } } }] },
        { id: "bob", awareness: [{ clientID: 22, state: { user: { name: "Bob", color: "#0000aa" } } }] },
      ],
    });
    const all = (await (await worker.fetch(`${base}/__dokit/snapshot`)).json()) as InspectorSnapshot;
    expect((all.connections as { id: string }[]).map((c) => c.id).sort()).toEqual(["ann", "bob", "watcher"]);

    // A third update compacts: the size moves to the snapshot.
    type(bob, "!");
    await expect.poll(async () => (await snapshotOf(base)).size.updates).toBe(0);
    const compacted = await snapshotOf(base);
    expect(compacted.size.snapshotBytes).toBeGreaterThan(0);
    expect(compacted.storedBytes).toBe(compacted.size.snapshotBytes);

    // After a hibernation the editors and their names come from the sockets' attachments, and the
    // size from SQL: the document stays on disk.
    await evictDurableObject(env.YJS_INSPECTED_ROOM.getByName(name));
    const woken = await snapshotOf(base);
    expect(woken).toEqual({ ...compacted, loaded: false });

    await bob.close();
    await expect.poll(async () => (await snapshotOf(base)).editors.map((e) => e.id)).toEqual(["ann"]);
    await Promise.all([ann.close(), watcher.close()]);
  });

  it("shows a state that is not JSON as its text, and one over the awareness budget without its state, beside a readable one", async () => {
    const base = `${LOCAL}/agents/yjs-inspected-room/${fresh("yjs-odd")}`;
    const odd = await editor(base, "odd");
    const big = await editor(base, "big");
    const fine = await editor(base, "fine");
    publish(odd, 1, "{not json");
    publish(big, 2, { user: { name: "x".repeat(5000) } });
    publish(fine, 3, { user: { name: "Fine" } });
    await expect.poll(async () => (await snapshotOf(base)).editors.filter((e) => (e.awareness as unknown[]).length > 0).length).toBe(3);
    expect((await snapshotOf(base)).editors).toEqual([
      { id: "big", awareness: [{ clientID: 2 }] },
      { id: "fine", awareness: [{ clientID: 3, state: { user: { name: "Fine" } } }] },
      { id: "odd", awareness: [{ clientID: 1, state: "{not json" }] },
    ]);
    await Promise.all([odd.close(), big.close(), fine.close()]);
  });
});
