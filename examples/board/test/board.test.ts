import { env, exports } from "cloudflare:workers";
import { hibernate, openSocket, publicIdOf, type TestSocket } from "dokit/testing";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { fresh } from "../../test-helpers";
import type { BoardState, Card } from "../src/api";

// The Worker's own fetch (typed by GlobalProps in env.d.ts): requests go through its routing.
const worker = exports.default;
type StateFrame = { type: "cf_agent_state"; state: BoardState };

/** Connects to board `name` and reads the connect sequence (identity, then state). */
async function connect(name: string, query: Record<string, string> = {}): Promise<{ socket: TestSocket; state: BoardState }> {
  const socket = await openSocket(worker, `http://example.com/agents/board/${name}`, { query });
  expect(await socket.nextJSON()).toEqual({ type: "cf_agent_identity", name, agent: "board", stateFollows: true });
  const { state } = await socket.nextJSON<StateFrame>();
  return { socket, state };
}

const promote = (board: string, connectionId: string, token?: string) =>
  worker.fetch("http://example.com/promote", {
    method: "POST",
    headers: token ? { Authorization: `Bearer ${token}` } : {},
    body: JSON.stringify({ board, connectionId }),
  });

describe("board", () => {
  it("starts empty, and a card added by one client reaches every client", async () => {
    const name = fresh("add");
    const alice = await connect(name);
    const bob = await connect(name);
    expect(alice.state).toEqual({ cards: [] });

    const card = (await alice.socket.rpc("addCard", ["  Write the docs  ", "todo"])) as Card;
    expect(card).toMatchObject({ text: "Write the docs", column: "todo" });
    expect((await bob.socket.nextJSON<StateFrame>()).state.cards).toEqual([card]);
    expect((await alice.socket.nextJSON<StateFrame>()).state.cards).toEqual([card]);

    expect(await bob.socket.rpc("moveCard", [card.id, "doing"])).toBe(true);
    expect((await alice.socket.nextJSON<StateFrame>()).state.cards[0]?.column).toBe("doing");
    expect(await bob.socket.rpc("removeCard", [card.id])).toBe(true);
    expect((await alice.socket.nextJSON<StateFrame>()).state.cards).toEqual([]);
    expect(await bob.socket.rpc("removeCard", [card.id])).toBe(false);
    await Promise.all([alice.socket.close(), bob.socket.close()]);
  });

  it("checks callable arguments with their schemas before the method runs", async () => {
    const name = fresh("schema");
    const { socket } = await connect(name);
    await expect(socket.rpc("addCard", ["   ", "todo"])).rejects.toThrow(/^Invalid argument text of addCard/);
    await expect(socket.rpc("addCard", ["ok", "someday"])).rejects.toThrow(/^Invalid argument column of addCard/);
    await expect(socket.rpc("moveCard", ["x".repeat(17), "done"])).rejects.toThrow(/^Invalid argument id of moveCard/);
    await expect(socket.rpc("promote", ["anyone"])).rejects.toThrow("Method promote does not exist");
    expect(await socket.drain()).toEqual([]);
    await socket.close();
  });

  it("validates client state frames with the zod schema", async () => {
    // The Board logs why it refused a frame; capture the warning instead of printing it.
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    onTestFinished(() => warn.mockRestore());
    const name = fresh("frames");
    const { socket } = await connect(name);
    socket.send({ type: "cf_agent_state", state: { cards: [{ id: "1", text: "", column: "todo" }] } });
    expect(await socket.nextJSON()).toEqual({ type: "cf_agent_state_error", error: "State update rejected" });
    expect(warn).toHaveBeenCalledExactlyOnceWith(
      expect.stringMatching(/^dokit: refused a state change from connection .*: cards\.0\.text: Too small/),
    );
    socket.send({ type: "cf_agent_state", state: { cards: [{ id: "1", text: "From a client", column: "done" }] } });
    const other = await connect(name);
    expect(other.state.cards).toEqual([{ id: "1", text: "From a client", column: "done" }]);
    await Promise.all([socket.close(), other.socket.close()]);
  });

  it("lets a view-only connection watch but not change the board", async () => {
    // A Refusal is logged as one info line, not an error with a stack; capture it instead of printing it.
    const info = vi.spyOn(console, "info").mockImplementation(() => {});
    onTestFinished(() => info.mockRestore());
    const name = fresh("view");
    const editor = await connect(name);
    const viewer = await connect(name, { mode: "view" });
    await expect(viewer.socket.rpc("addCard", ["Sneaky", "todo"])).rejects.toThrow("This board is view-only for you");
    expect(info).toHaveBeenCalledExactlyOnceWith("dokit: callable addCard refused: This board is view-only for you");
    viewer.socket.send({ type: "cf_agent_state", state: { cards: [] } });
    expect(await viewer.socket.nextJSON()).toEqual({ type: "cf_agent_state_error", error: "Connection is readonly" });
    expect(await viewer.socket.nextJSON<StateFrame>()).toMatchObject({ type: "cf_agent_state", state: { cards: [] } });

    await editor.socket.rpc("addCard", ["Visible to viewers", "todo"]);
    expect((await viewer.socket.nextJSON<StateFrame>()).state.cards).toHaveLength(1);
    await Promise.all([editor.socket.close(), viewer.socket.close()]);
  });

  it("promotes a viewer through the Worker's auth check and DO RPC, and the promotion survives hibernation", async () => {
    const name = fresh("promote");
    const viewer = await connect(name, { mode: "view", _pk: "viewer-1" });
    expect((await promote(name, "viewer-1")).status).toBe(403);
    expect((await promote(name, "viewer-1", "wrong")).status).toBe(403);
    expect(await (await promote(name, "nobody", env.BOARD_EDITOR_TOKEN)).json()).toEqual({ promoted: false });
    expect(await (await promote(name, "viewer-1", env.BOARD_EDITOR_TOKEN)).json()).toEqual({ promoted: true });
    expect(await viewer.socket.nextJSON()).toEqual({ type: "promoted" });

    await hibernate(env.Board.get(env.Board.idFromName(name)));
    const card = (await viewer.socket.rpc("addCard", ["Now I edit", "done"])) as Card;
    expect((await viewer.socket.nextJSON<StateFrame>()).state.cards).toEqual([card]);
    await viewer.socket.close();
  });

  it("shows who is here (view-only pages too) with schema-checked presence, and coalesces typing to one message a tick", async () => {
    const name = fresh("presence");
    const editor = await connect(name, { _pk: "ed" });
    const viewer = await connect(name, { _pk: "vi", mode: "view" });
    // What other pages are shown of a connection: its public id, never its `_pk`.
    const [ed, vic] = [await publicIdOf("ed"), await publicIdOf("vi")];
    viewer.socket.send({ type: "dokit_presence", value: { name: "Vic", color: "#336699" } });
    expect(await viewer.socket.nextJSON()).toEqual({ type: "dokit_presence", you: vic, all: [[vic, { name: "Vic", color: "#336699" }]] });
    editor.socket.send({ type: "dokit_presence", value: { name: "Eve", color: "#aa0000", cursor: { x: 0.5, y: 0.25 } } });
    expect(await editor.socket.nextJSON()).toMatchObject({ type: "dokit_presence", you: ed });
    // One tick carries both pages to the view-only one.
    const seen = new Map<string, unknown>();
    while (seen.size < 2) for (const [id, value] of (await viewer.socket.nextJSON<{ set: [string, unknown][] }>()).set) seen.set(id, value);
    expect(seen.get(ed)).toEqual({ name: "Eve", color: "#aa0000", cursor: { x: 0.5, y: 0.25 } });
    // The schema refuses a cursor off the board.
    await editor.socket.drain(200);
    editor.socket.send({ type: "dokit_presence", value: { name: "Eve", color: "#aa0000", cursor: { x: 2, y: 0 } } });
    expect(await editor.socket.nextJSON()).toEqual({ type: "dokit_error", code: "PRESENCE_REJECTED", error: "Presence value rejected" });
    await editor.socket.drain(200);
    await viewer.socket.drain(200);
    // Ten keystrokes in one tick: the viewer hears once, with the editor's presence name.
    await Promise.all(Array.from({ length: 10 }, () => editor.socket.rpc("typing")));
    expect((await viewer.socket.drain(300)).map((message) => JSON.parse(String(message)))).toEqual([{ type: "typing", id: ed, name: "Eve" }]);
    const info = vi.spyOn(console, "info").mockImplementation(() => {}); // dokit logs a refused call at info
    onTestFinished(() => info.mockRestore());
    await expect(viewer.socket.rpc("typing")).rejects.toThrow("This board is view-only for you");
    expect(info.mock.calls).toEqual([["dokit: callable typing refused: This board is view-only for you"]]);
    await Promise.all([editor.socket.close(), viewer.socket.close()]);
  });

  it("serves the React page", async () => {
    expect(await (await worker.fetch("http://example.com/")).text()).toContain('<div id="root"></div>');
    expect((await (await worker.fetch("http://example.com/page.js")).text()).length).toBeGreaterThan(10_000);
  });
});
