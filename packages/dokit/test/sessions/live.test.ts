import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hibernate, openSocket, type TestSocket, type Upgrader } from "../../src/testing";
import { fresh } from "../helpers";
import { captureConsole } from "../logs";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: Upgrader }).default;
const live = (name: string) => env.LIVE.get(env.LIVE.idFromName(name));
const text = (id: string, body: string, role = "user") => ({ id, role, parts: [{ type: "text", text: body }] });

/** Opens a connection to a LiveConversation and reads its connect sequence. */
async function join(name: string, query: Record<string, string> = {}): Promise<TestSocket> {
  const socket = await openSocket(worker, `http://example.com/agents/live/${name}`, { query });
  await socket.drain(30);
  return socket;
}

/** Sends a session frame. */
const send = (socket: TestSocket, frame: Record<string, unknown>) => socket.send({ type: "dokit_session", ...frame });

describe("live history", () => {
  it("a page is the newest messages of the path; before continues it; leafId follows a branch", async () => {
    const name = fresh("pages");
    const stub = live(name);
    for (let i = 0; i < 120; i++) await stub.serverAppend("", text(`m${i}`, `message ${i}`));
    await stub.serverAppend("", text("alt", "another branch"), "m9");
    const reader = await join(name);
    send(reader, { op: "page", id: "p1", session: "", limit: 50 });
    const first = await reader.nextJSON<{ op: string; id: string; messages: { id: string }[]; more: boolean }>();
    expect(first).toMatchObject({ type: "dokit_session", op: "page", id: "p1", session: "", more: false });
    // The active leaf is the branch written last.
    expect(first.messages.map((message) => message.id)).toEqual([...Array.from({ length: 10 }, (_, i) => `m${i}`), "alt"]);
    send(reader, { op: "page", id: "p2", session: "", leafId: "m119", limit: 50 });
    const newest = await reader.nextJSON<{ messages: { id: string }[]; more: boolean }>();
    expect(newest.messages.map((message) => message.id)).toEqual(Array.from({ length: 50 }, (_, i) => `m${70 + i}`));
    expect(newest.more).toBe(true);
    send(reader, { op: "page", id: "p3", session: "", leafId: "m119", before: "m70", limit: 500 });
    const older = await reader.nextJSON<{ messages: { id: string }[]; more: boolean }>();
    expect(older.messages).toHaveLength(70);
    expect(older.more).toBe(false);
    send(reader, { op: "page", id: "p4", session: "", leafId: "m119", maxBytes: 1 });
    expect((await reader.nextJSON<{ messages: unknown[] }>()).messages).toHaveLength(1);
    send(reader, { op: "page", id: "p5", session: "", leafId: "nope" });
    expect(await reader.nextJSON()).toMatchObject({ id: "p5", messages: [], more: false });
  });

  it("watchers receive appends, updates and deletes in order; a connection that does not watch receives none", async () => {
    const name = fresh("watch");
    const stub = live(name);
    const writer = await join(name, { role: "writer" });
    const reader = await join(name);
    const bystander = await join(name);
    send(writer, { op: "watch", session: "" });
    send(reader, { op: "watch", session: "" });
    send(reader, { op: "page", id: "sync", session: "" });
    expect(await reader.nextJSON()).toMatchObject({ op: "page", id: "sync", messages: [] });
    send(writer, { op: "append", id: "w1", session: "", message: text("c1", "from the page") });
    expect(await writer.frames(2)).toEqual([
      { type: "dokit_session", op: "event", session: "", event: { type: "append", message: text("c1", "from the page"), parentId: null, inserted: true } },
      { type: "dokit_session", op: "ack", id: "w1", session: "", inserted: true },
    ]);
    await stub.serverAppend("", text("a1", "reply", "assistant"));
    await stub.serverUpdate("", text("a1", "reply, edited", "assistant"));
    await stub.serverDelete("", ["c1"]);
    const events = (await reader.frames<{ event: Record<string, unknown> }>(4)).map((frame) => frame.event);
    expect(events).toEqual([
      { type: "append", message: text("c1", "from the page"), parentId: null, inserted: true },
      { type: "append", message: text("a1", "reply", "assistant"), parentId: "c1", inserted: true },
      { type: "update", message: text("a1", "reply, edited", "assistant") },
      { type: "delete", messageIds: ["c1"] },
    ]);
    expect(await bystander.drain(50)).toEqual([]);
    send(reader, { op: "unwatch", session: "" });
    send(reader, { op: "page", id: "fence", session: "" });
    await reader.nextJSON();
    await stub.serverAppend("", text("a2", "unseen"));
    expect(await reader.drain(50)).toEqual([]);
  });

  it("watching survives hibernation: a write after eviction reaches the watcher", async () => {
    const name = fresh("hibernate");
    const stub = live(name);
    const reader = await join(name);
    send(reader, { op: "watch", session: "notes" });
    send(reader, { op: "page", id: "fence", session: "notes" });
    await reader.nextJSON();
    await hibernate(stub);
    await stub.serverAppend("notes", text("n1", "after the wake"));
    expect(await reader.nextJSON()).toEqual({
      type: "dokit_session",
      op: "event",
      session: "notes",
      event: { type: "append", message: text("n1", "after the wake"), parentId: null, inserted: true },
    });
  });

  it("readonly connections and readers may not write; a session the access option refuses cannot be read; nothing is stored", async () => {
    const name = fresh("access");
    const stub = live(name);
    const viewer = await join(name, { role: "writer", mode: "view" });
    send(viewer, { op: "append", id: "v1", session: "", message: text("x", "no") });
    expect(await viewer.nextJSON()).toEqual({ type: "dokit_error", code: "SESSION_FORBIDDEN", error: "Connection is readonly", id: "v1", session: "" });
    // A readonly connection still reads.
    send(viewer, { op: "page", id: "v2", session: "" });
    expect(await viewer.nextJSON()).toMatchObject({ op: "page", id: "v2" });
    const reader = await join(name);
    send(reader, { op: "update", id: "r1", session: "", message: text("x", "no") });
    expect(await reader.nextJSON()).toMatchObject({ type: "dokit_error", code: "SESSION_FORBIDDEN", id: "r1" });
    const writer = await join(name, { role: "writer" });
    for (const op of ["watch", "page"]) {
      send(writer, { op, id: "w", session: "private" });
      expect(await writer.nextJSON()).toMatchObject({ type: "dokit_error", code: "SESSION_FORBIDDEN", session: "private" });
    }
    expect(await stub.path("")).toEqual([]);
  });

  it("a client message over the limit is refused with MESSAGE_TOO_LARGE and nothing is stored; reserved metadata is removed", async () => {
    const name = fresh("limit");
    const stub = live(name);
    const writer = await join(name, { role: "writer" });
    const watcher = await join(name);
    send(watcher, { op: "watch", session: "" });
    send(writer, { op: "append", id: "big", session: "", message: text("big", "x".repeat(5000)) });
    const refused = await writer.nextJSON<{ code: string; error: string; id: string }>();
    expect(refused).toMatchObject({ type: "dokit_error", code: "MESSAGE_TOO_LARGE", id: "big", session: "" });
    expect(refused.error).toMatch(/^a client message of \d+ bytes is over this session's limit of 4096/);
    expect(await stub.path("")).toEqual([]);
    expect(await watcher.drain(50)).toEqual([]);
    send(writer, { op: "append", id: "ok", session: "", message: { ...text("m", "fine"), metadata: { trusted: true, note: 1 } } });
    expect(await writer.nextJSON()).toMatchObject({ op: "ack", id: "ok", inserted: true });
    expect(((await watcher.nextJSON()) as { event: { message: { metadata: unknown } } }).event.message.metadata).toEqual({ note: 1 });
  });

  it("malformed frames are refused to their sender only and the connection keeps working", async () => {
    const name = fresh("malformed");
    const stub = live(name);
    const logs = captureConsole();
    const writer = await join(name, { role: "writer" });
    const other = await join(name);
    send(other, { op: "watch", session: "" });
    const bad: Record<string, unknown>[] = [
      { op: "watch" },
      { op: "watch", session: "s".repeat(300) },
      { op: "dance", session: "" },
      { op: "page", session: "" },
      { op: "append", id: "1", session: "", message: "not a message" },
      { op: "append", id: "2", session: "", message: { id: "", role: "user", parts: [] } },
      { op: "append", id: "3", session: "", message: text("m", "x"), parentId: 7 },
      { op: "page", id: "4", session: "", before: 12 },
    ];
    for (const frame of bad) {
      send(writer, frame);
      expect(await writer.nextJSON()).toMatchObject({ type: "dokit_error", code: "SESSION_REJECTED" });
    }
    for (let i = 0; i < 8; i++) send(writer, { op: "watch", session: `s${i}` });
    send(writer, { op: "watch", session: "one-too-many" });
    expect(await writer.nextJSON()).toMatchObject({ code: "SESSION_REJECTED", error: "A connection may watch at most 8 sessions" });
    send(writer, { op: "append", id: "good", session: "", message: text("m", "fine") });
    expect(await writer.nextJSON()).toMatchObject({ op: "ack", id: "good", inserted: true });
    expect(await stub.path("")).toEqual(["m"]);
    expect((await other.nextJSON<{ event: { type: string } }>()).event.type).toBe("append");
    expect(logs.error).toEqual([]);
  });
});
