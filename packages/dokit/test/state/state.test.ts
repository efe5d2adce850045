import { DurableObject, env, exports } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { type Connection, Lifecycle } from "../../src/lifecycle";
import { OPEN_FAILED_REASON } from "../../src/protocol/close-codes";
import { STATE } from "../../src/protocol/agents";
import { State } from "../../src/state";
import { hibernate, openSocket, type TestSocket, type Upgrader } from "../../src/testing";
import { captureConsole } from "../logs";
import { fresh } from "../helpers";
import { refusedClose } from "../refused-upgrade";
import { type Board, BoardSchema, PlainStore, type SyncedBoard } from "./objects";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: Upgrader }).default;
const READONLY_ERROR = '{"type":"cf_agent_state_error","error":"Connection is readonly"}';
const REJECTED_ERROR = '{"type":"cf_agent_state_error","error":"State update rejected"}';
const INITIAL_BOARD: Board = { title: "Board", cards: [], version: 0 };

const plain = (name = fresh("plain")) => env.STATE_PLAIN.get(env.STATE_PLAIN.idFromName(name));
const synced = (name: string) => env.STATE_SYNCED.get(env.STATE_SYNCED.idFromName(name));

/** @returns the raw `value` column of the State's row, or `undefined` when there is none */
function storedRow(ctx: DurableObjectState): unknown {
  const table = ctx.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'dokit_state'").toArray();
  if (table.length === 0) return undefined;
  return ctx.storage.sql.exec("SELECT value FROM dokit_state WHERE id = 'state'").toArray()[0]?.value;
}

/** Opens a socket to a SyncedBoard and reads its connect frames (identity, state) unless it has no protocol. */
async function join(name: string, query: Record<string, string> = {}): Promise<TestSocket> {
  const socket = await openSocket(worker, `http://example.com/agents/state-synced/${name}`, { query });
  if (query.client !== "sensor") await socket.frames(2);
  return socket;
}

/** Reads until `text` arrives. @returns the messages before it, parsed when JSON */
async function until(socket: TestSocket, text: string): Promise<Record<string, unknown>[]> {
  const before: Record<string, unknown>[] = [];
  for (;;) {
    const message = await socket.next(10_000);
    if (message === text) return before;
    before.push(JSON.parse(message as string) as Record<string, unknown>);
  }
}

const stateFrame = (state: unknown) => ({ type: STATE, state });


describe("State storage", () => {
  it("says how to bind the class when it has no SQLite (NO_SQLITE)", async () => {
    const stub = env.STATE_KV_ONLY.get(env.STATE_KV_ONLY.idFromName(fresh("kv-only")));
    expect(await stub.tryRead()).toEqual({
      code: "NO_SQLITE",
      message: 'dokit: State stores its value in SQLite: bind this class in "new_sqlite_classes" (not "new_classes") in its wrangler migration',
    });
  });

  it("names initialState when a State has none", async () => {
    const message = await runInDurableObject(plain(), (_instance, ctx) => {
      class Host extends DurableObject {
        // SAFETY: JavaScript callers can leave out what the types require.
        readonly store = new State({} as never);
        readonly lifecycle = Lifecycle.install(this).use(this.store);
      }
      try {
        new Host(ctx, env).store.get();
        return "read";
      } catch (error) {
        return (error as Error).message;
      }
    });
    expect(message).toBe("dokit: State needs an initialState: new State({ initialState: … }) gives the value a new object starts with");
  });

  it("seeds initialState once, lazily, without calling onChanged", async () => {
    const stub = plain();
    await runInDurableObject(stub, (instance: PlainStore, ctx) => {
      // A wake that never touches state runs no SQL for it.
      expect(storedRow(ctx)).toBeUndefined();
      expect(instance.read()).toEqual({ seeded: true, at: "initial" });
      expect(storedRow(ctx)).toBe('{"seeded":true,"at":"initial"}');
      expect(instance.changes).toBe(0);
      instance.write("changed");
    });
    await hibernate(stub);
    expect(await stub.read()).toBe("changed");
    await runInDurableObject(stub, (instance: PlainStore, ctx) => {
      expect(storedRow(ctx)).toBe('"changed"');
      expect(instance.changes).toBe(0);
    });
  });

  it("persists across eviction and across a fresh instance", async () => {
    const stub = plain();
    await stub.write({ cards: ["a", "b"], n: 1 });
    await hibernate(stub);
    expect(await stub.read()).toEqual({ cards: ["a", "b"], n: 1 });
    const fromFreshInstance = await runInDurableObject(stub, (_instance, ctx) => new PlainStore(ctx, env).read());
    expect(fromFreshInstance).toEqual({ cards: ["a", "b"], n: 1 });
  });

  it("keeps in memory what a fresh instance reads back (toJSON, undefined properties)", async () => {
    const stub = plain();
    const inMemory = await runInDurableObject(stub, (instance: PlainStore) => {
      instance.write({ at: new Date(0), gone: undefined, list: [1] });
      return instance.read();
    });
    expect(inMemory).toStrictEqual({ at: "1970-01-01T00:00:00.000Z", list: [1] });
    await hibernate(stub);
    expect(await stub.read()).toStrictEqual(inMemory);
  });

  it("round-trips falsy values", async () => {
    const stub = plain();
    for (const value of [null, 0, false, ""]) {
      expect(await stub.write(value)).toBe(value);
      await hibernate(stub);
      expect(await stub.read()).toBe(value);
      const fromFreshInstance = await runInDurableObject(stub, (_instance, ctx) => new PlainStore(ctx, env).read());
      expect(fromFreshInstance).toBe(value);
    }
  });

  it("falls back to initialState on a corrupt row with a warning, and the next set replaces it", async () => {
    const logs = captureConsole();
    for (const garbage of ["'{not json'", "X'00ff'"]) {
      const stub = plain();
      await stub.write("good");
      await runInDurableObject(stub, (_instance, ctx) => {
        ctx.storage.sql.exec(`UPDATE dokit_state SET value = ${garbage} WHERE id = 'state'`);
      });
      await hibernate(stub);
      expect(await stub.read()).toEqual({ seeded: true, at: "initial" });
      expect(logs.warn.splice(0)).toEqual([expect.stringMatching(/^dokit: the stored state in dokit_state of .* is corrupt/)]);
      expect(await stub.write("repaired")).toBe("repaired");
      await hibernate(stub);
      expect(await stub.read()).toBe("repaired");
    }
  });

  it("refuses values JSON cannot carry with INVALID_STATE, storing nothing", async () => {
    const stub = plain();
    await stub.write("before");
    await runInDurableObject(stub, (instance: PlainStore, ctx) => {
      const cyclic: Record<string, unknown> = { a: 1 };
      cyclic.self = cyclic;
      const values: unknown[] = [
        10n,
        { deep: { count: 10n } },
        cyclic,
        () => 1,
        { handler() {} },
        Symbol("s"),
        new Map([["a", 1]]),
        { tags: new Set(["a"]) },
        new Uint8Array(4),
        Number.NaN,
        { n: Number.POSITIVE_INFINITY },
        undefined,
      ];
      for (const value of values) {
        const outcome = instance.tryWrite(value);
        expect(outcome).toMatchObject({ ok: false, code: "INVALID_STATE" });
        expect((outcome as { message: string }).message).toMatch(/^dokit: State values must be JSON-serializable/);
      }
      expect(instance.read()).toBe("before");
      expect(storedRow(ctx)).toBe('"before"');
      expect(instance.changes).toBe(1);
    });
  });

  it("refuses a value the function validator rejects, with INVALID_STATE", async () => {
    const stub = plain();
    await stub.write("before");
    const outcome = await stub.tryWrite("forbidden");
    expect(outcome).toEqual({
      ok: false,
      code: "INVALID_STATE",
      message: "dokit: State rejected the value: the value 'forbidden' is not allowed here",
    });
    await hibernate(stub);
    expect(await stub.read()).toBe("before");
  });

  it("refuses an async schema with a clear error", async () => {
    const stub = env.STATE_ASYNC.get(env.STATE_ASYNC.idFromName(fresh("async")));
    await runInDurableObject(stub, (instance) => {
      let caught: unknown;
      try {
        instance.store.set("fine");
      } catch (error) {
        caught = error;
      }
      expect(caught).toMatchObject({ code: "INVALID_ARGUMENT" });
      expect((caught as Error).message).toMatch(/zod schema validated asynchronously; set\(\) is synchronous/);
      expect(instance.store.get()).toBe("ok");
    });
  });

  it("logs onChanged errors and never breaks set()", async () => {
    const stub = plain();
    const logs = captureConsole();
    await runInDurableObject(stub, async (instance: PlainStore) => {
      expect(instance.write("throw")).toBe("throw");
      expect(instance.write("reject")).toBe("reject");
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(instance.changes).toBe(2);
    });
    expect(logs.error).toEqual([
      "dokit: State onChanged failed Error: hook failed synchronously",
      "dokit: State onChanged failed Error: hook failed asynchronously",
    ]);
    expect(await stub.read()).toBe("reject");
  });

  it("adopts the reference implementation's state row (cf_agents_state)", async () => {
    const stub = plain();
    await runInDurableObject(stub, (instance: PlainStore, ctx) => {
      // The schema agents@0.32.0 creates.
      ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS cf_agents_state (id TEXT PRIMARY KEY NOT NULL, state TEXT)");
      ctx.storage.sql.exec("INSERT INTO cf_agents_state (id, state) VALUES ('cf_state_row_id', ?)", '{"cards":["legacy"]}');
      expect(storedRow(ctx)).toBeUndefined();
      expect(instance.read()).toEqual({ cards: ["legacy"] });
      expect(storedRow(ctx)).toBe('{"cards":["legacy"]}');
      expect(instance.changes).toBe(0);
      // Adopted once: later edits of the reference row are not read again.
      ctx.storage.sql.exec("UPDATE cf_agents_state SET state = '\"stale\"'");
    });
    await hibernate(stub);
    expect(await stub.read()).toEqual({ cards: ["legacy"] });
  });

  it("seeds initialState when the reference row is corrupt", async () => {
    const stub = plain();
    const logs = captureConsole();
    await runInDurableObject(stub, (instance: PlainStore, ctx) => {
      ctx.storage.sql.exec("CREATE TABLE cf_agents_state (id TEXT PRIMARY KEY NOT NULL, state TEXT)");
      ctx.storage.sql.exec("INSERT INTO cf_agents_state (id, state) VALUES ('cf_state_row_id', '{oops')");
      expect(instance.read()).toEqual({ seeded: true, at: "initial" });
    });
    expect(logs.warn).toEqual([expect.stringMatching(/^dokit: the stored state in cf_agents_state .* is corrupt/)]);
  });

  it("works for an unnamed object", async () => {
    const stub = env.STATE_PLAIN.get(env.STATE_PLAIN.newUniqueId());
    expect(await stub.read()).toEqual({ seeded: true, at: "initial" });
    await stub.write({ unnamed: true });
    await hibernate(stub);
    expect(await stub.read()).toEqual({ unnamed: true });
  });

  it("works without WebSockets: upgrades are declined, state still works", async () => {
    const logs = captureConsole();
    const name = fresh("no-sockets");
    const refused = await worker.fetch(`http://example.com/agents/state-plain/${name}`, { headers: { Upgrade: "websocket" } });
    expect(await refusedClose(refused)).toEqual({ code: 4501, reason: expect.stringMatching(/^dokit: this object has no WebSockets/) });
    expect(logs.warn).toEqual([expect.stringMatching(/^dokit: this object has no WebSockets: .* \(class plain-store\)$/)]);
    expect(await plain(name).write([1, 2])).toEqual([1, 2]);
  });

  it("finds T from a schema's output, an explicit type argument, or initialState", () => {
    expectTypeOf<SyncedBoard["board"]>().toEqualTypeOf<State<Board>>();
    const Theme = z.object({ theme: z.enum(["light", "dark"]) });
    // A schema's literal types are not widened by initialState.
    expectTypeOf(new State({ initialState: { theme: "light" }, validate: Theme })).toEqualTypeOf<State<{ theme: "light" | "dark" }>>();
    // @ts-expect-error initialState must match the schema's output
    void new State({ initialState: { theme: "blue" }, validate: Theme });
    expectTypeOf(new State<Board>({ initialState: INITIAL_BOARD, validate: BoardSchema })).toEqualTypeOf<State<Board>>();
    // @ts-expect-error an explicit type is checked against initialState
    void new State<Board>({ initialState: { title: 1, cards: [], version: 0 } });
    expectTypeOf(new State({ initialState: 0 })).toEqualTypeOf<State<number>>();
    expectTypeOf(new State({ initialState: { a: 1 }, validate: (next) => expectTypeOf(next).toEqualTypeOf<{ a: number }>() })).toEqualTypeOf<
      State<{ a: number }>
    >();
    expectTypeOf<State<number>["set"]>().parameter(1).toEqualTypeOf<"server" | Connection | undefined>();
    expect(new State({ initialState: 0 })).toBeInstanceOf(State);
  });
});

describe("a State given to WebSockets syncs itself", () => {
  const auto = (name: string) => env.STATE_AUTO.get(env.STATE_AUTO.idFromName(name));
  const joinAuto = async (name: string) => {
    const socket = await openSocket(worker, `http://example.com/agents/state-auto/${name}`);
    await socket.frames(2); // identity, state
    return socket;
  };

  it("sends a client's change to every other client once, without onChanged", async () => {
    const name = fresh("auto");
    const [a, b, c] = [await joinAuto(name), await joinAuto(name), await joinAuto(name)];
    a.send(stateFrame({ title: "from a", cards: [], version: 1 }));
    for (const other of [b, c]) {
      expect(await other.nextJSON()).toEqual(stateFrame({ title: "from a", cards: [], version: 1 }));
      expect(await other.drain(100)).toEqual([]);
    }
    expect(await a.drain(0)).toEqual([]); // never its own change back
    for (const socket of [a, b, c]) await socket.close();
  });

  it("sends a server change to every client, also from an object that waits to be wired after a wake", async () => {
    const name = fresh("auto-server");
    const [a, b] = [await joinAuto(name), await joinAuto(name)];
    for (const round of [1, 2]) {
      await auto(name).rename(`round ${round}`);
      for (const socket of [a, b]) {
        expect(await socket.nextJSON()).toEqual(stateFrame({ title: `round ${round}`, cards: [], version: round }));
        expect(await socket.drain(50)).toEqual([]);
      }
      await hibernate(auto(name));
    }
    for (const socket of [a, b]) await socket.close();
  });

  it("sends each change once when onChanged also calls broadcastState (code written for the reference)", async () => {
    const name = fresh("ref-style");
    const [a, b] = [await join(name), await join(name)];
    a.send(stateFrame({ title: "once", cards: [], version: 1 }));
    expect(await b.nextJSON()).toEqual(stateFrame({ title: "once", cards: [], version: 1 }));
    expect(await b.drain(100)).toEqual([]);
    expect(await a.drain(0)).toEqual([]);
    await synced(name).rename("server once");
    for (const socket of [a, b]) {
      expect((await socket.nextJSON()).state).toMatchObject({ title: "server once", version: 2 });
      expect(await socket.drain(100)).toEqual([]);
    }
    for (const socket of [a, b]) await socket.close();
  });
});

describe("State sync over WebSockets", () => {
  it("sends the state exactly once to a connecting client, even when its connect seeds it", async () => {
    const name = fresh("connect");
    const a = await openSocket(worker, `http://example.com/agents/state-synced/${name}`);
    expect(await a.frames(2)).toEqual([
      { type: "cf_agent_identity", name, agent: "synced-board", stateFollows: true },
      { type: STATE, state: INITIAL_BOARD },
    ]);
    expect(await a.drain(100)).toEqual([]);
    const b = await openSocket(worker, `http://example.com/agents/state-synced/${name}`);
    expect((await b.frames(2))[1]).toEqual({ type: STATE, state: INITIAL_BOARD });
    expect(await b.drain(50)).toEqual([]);
    expect(await a.drain(50)).toEqual([]);
    await runInDurableObject(synced(name), (instance: SyncedBoard) => expect(instance.changes).toEqual([]));
    await a.close();
    await b.close();
  });

  it("sends a client's accepted frame to every other protocol-enabled client, not to its sender", async () => {
    const name = fresh("fanout");
    const a = await join(name, { _pk: "writer-a" });
    const b = await join(name);
    const viewer = await join(name, { mode: "view" });
    const sensor = await join(name, { client: "sensor" });
    const next: Board = { title: "From A", cards: ["x"], version: 1 };
    a.send(stateFrame(next));
    expect(await b.nextJSON()).toEqual({ type: STATE, state: next });
    expect(await viewer.nextJSON()).toEqual({ type: STATE, state: next });
    expect(await a.drain(100)).toEqual([]);
    expect(await sensor.drain(0)).toEqual([]);
    await runInDurableObject(synced(name), (instance: SyncedBoard, ctx) => {
      expect(instance.changes).toEqual([{ state: next, source: "writer-a" }]);
      expect(storedRow(ctx)).toBe(JSON.stringify(next));
    });
    for (const socket of [a, b, viewer, sensor]) await socket.close();
  });

  it("sends a server-side set to everyone", async () => {
    const name = fresh("server-set");
    const a = await join(name);
    const b = await join(name);
    const expected = { ...INITIAL_BOARD, title: "Server", version: 1 };
    expect(await synced(name).rename("Server")).toEqual(expected);
    expect(await a.nextJSON()).toEqual({ type: STATE, state: expected });
    expect(await b.nextJSON()).toEqual({ type: STATE, state: expected });
    await a.close();
    await b.close();
  });

  it("stores and broadcasts the schema's output (coercion and transforms)", async () => {
    const name = fresh("coerce");
    const a = await join(name);
    const b = await join(name);
    a.send(stateFrame({ title: "  padded  ", cards: [], version: "7" }));
    const coerced = { title: "padded", cards: [], version: 7 };
    expect(await b.nextJSON()).toEqual({ type: STATE, state: coerced });
    // The sender sent something else, so it gets the stored value back.
    expect(await a.nextJSON()).toEqual({ type: STATE, state: coerced });
    expect(await a.drain()).toEqual([]);
    await hibernate(synced(name));
    expect(await synced(name).value()).toEqual(coerced);
    await a.close();
    await b.close();
  });

  it("refuses a schema failure with the protocol's text, logs the reason, stores and broadcasts nothing", async () => {
    const name = fresh("rejected");
    const logs = captureConsole();
    const a = await join(name);
    const b = await join(name);
    a.send(stateFrame({ title: "bad", cards: "not a list", version: -1 }));
    expect(await a.next()).toBe(REJECTED_ERROR);
    // The refusal is followed by the stored value, to the sender only.
    expect(await a.nextJSON()).toEqual({ type: STATE, state: INITIAL_BOARD });
    expect(await b.drain(100)).toEqual([]);
    expect(await a.drain(0)).toEqual([]);
    expect(logs).toEqual({
      error: [],
      warn: [expect.stringMatching(/^dokit: refused a state change from connection .*: dokit: State rejected the value: cards: /)],
      info: [],
    });
    await runInDurableObject(synced(name), (instance: SyncedBoard, ctx) => {
      expect(instance.changes).toEqual([]);
      expect(instance.board.get()).toEqual(INITIAL_BOARD);
      expect(storedRow(ctx)).toBe(JSON.stringify(INITIAL_BOARD));
    });
    await a.close();
    await b.close();
  });

  it("refuses a readonly connection's frame, before and after hibernation", async () => {
    const name = fresh("readonly");
    const writer = await join(name);
    const viewer = await join(name, { mode: "view" });
    const third = await join(name);
    for (const round of [1, 2]) {
      viewer.send(stateFrame({ title: `viewer ${round}`, cards: [], version: 9 }));
      expect(await viewer.next()).toBe(READONLY_ERROR);
      expect(await viewer.nextJSON()).toEqual({ type: STATE, state: INITIAL_BOARD });
      expect(await third.drain(100)).toEqual([]);
      expect(await writer.drain(0)).toEqual([]);
      expect(await synced(name).value()).toEqual(INITIAL_BOARD);
      await hibernate(synced(name));
    }
    // The viewer still receives state.
    writer.send(stateFrame({ title: "ok", cards: [], version: 1 }));
    expect((await viewer.nextJSON()).state).toEqual({ title: "ok", cards: [], version: 1 });
    for (const socket of [writer, viewer, third]) await socket.close();
  });

  it("passes malformed state frames, and state frames from protocol-less connections, to onMessage", async () => {
    const name = fresh("malformed");
    const a = await join(name);
    const sensor = await join(name, { client: "sensor" });
    const malformed = JSON.stringify({ type: STATE, value: 1 });
    a.send(malformed);
    expect(await a.next()).toBe(`unhandled:${malformed}`);
    const fromSensor = JSON.stringify(stateFrame({ title: "sensor", cards: [], version: 3 }));
    sensor.send(fromSensor);
    expect(await sensor.next()).toBe(`unhandled:${fromSensor}`);
    expect(await synced(name).value()).toEqual(INITIAL_BOARD);
    await a.close();
    await sensor.close();
  });

  it("ends 1 000 rapid frames from 10 clients with the last accepted value stored", async () => {
    const name = fresh("rapid");
    const logs = captureConsole();
    const clients = await Promise.all(Array.from({ length: 10 }, (_, i) => join(name, { _pk: `c${i}` })));
    clients.forEach((socket, i) => {
      for (let j = 0; j < 100; j++) {
        // Every tenth frame is refused by the schema (negative version).
        socket.send(stateFrame({ title: `c${i}`, cards: [], version: j % 10 === 9 ? -1 : j, from: `c${i}` }));
      }
      socket.send("ping");
    });
    const received = await Promise.all(clients.map((socket) => until(socket, "pong")));
    for (const [i, frames] of received.entries()) {
      expect(frames.filter((frame) => frame.type === "cf_agent_state_error")).toHaveLength(10);
      // Each refusal is followed by the stored value; apart from those, never its own frame back.
      const refusedAt = frames.flatMap((frame, at) => (frame.type === "cf_agent_state_error" ? [at] : []));
      for (const at of refusedAt) expect(frames[at + 1]?.type).toBe(STATE);
      const echoes = frames.filter((frame, at) => !refusedAt.includes(at - 1) && (frame.state as Board | undefined)?.from === `c${i}`);
      expect(echoes).toEqual([]);
    }
    const last = await runInDurableObject(synced(name), (instance: SyncedBoard, ctx) => {
      expect(instance.changes).toHaveLength(900);
      // Input gates keep each client's frames in order.
      for (let i = 0; i < 10; i++) {
        const versions = instance.changes.filter((change) => change.source === `c${i}`).map((change) => change.state.version);
        expect(versions).toEqual([...versions].sort((x, y) => x - y));
        expect(versions).toHaveLength(90);
      }
      const lastAccepted = instance.changes.at(-1)?.state;
      expect(instance.board.get()).toEqual(lastAccepted);
      expect(JSON.parse(storedRow(ctx) as string)).toEqual(lastAccepted);
      return lastAccepted;
    });
    await hibernate(synced(name));
    expect(await synced(name).value()).toEqual(last);
    for (const socket of clients) await socket.close();
    // Each refused frame is logged once, as a warning.
    const refused = expect.stringMatching(/^dokit: refused a state change from connection c\d: dokit: State rejected the value: version: /);
    expect(logs.warn).toEqual(Array.from({ length: 100 }, () => refused));
    expect(logs.error).toEqual([]);
  }, 30_000);

  it("protocol: false: sendConnectFrames and applyStateFrame drive the sequence by hand", async () => {
    const name = fresh("manual");
    const url = `http://example.com/agents/state-manual/${name}`;
    const a = await openSocket(worker, url);
    expect(await a.frames(2)).toEqual([
      { type: "cf_agent_identity", name, agent: "manual-presence", stateFollows: true },
      { type: STATE, state: { online: 0 } },
    ]);
    const b = await openSocket(worker, url);
    await b.frames(2);
    a.send(stateFrame({ online: 2 }));
    expect(await b.nextJSON()).toEqual({ type: STATE, state: { online: 2 } });
    const chat = JSON.stringify({ type: "chat", text: "hello" });
    a.send(chat);
    expect(await a.next()).toBe(`echo:${chat}`);
    await a.close();
    await b.close();
  });
});

describe("wiring on demand (docs/lifecycle.md)", () => {
  const room = (name: string) => env.WAKE_ROOM.get(env.WAKE_ROOM.idFromName(name));
  const openRoom = async (name: string, id: string) => {
    const socket = await openSocket(worker, `http://example.com/agents/wake-room/${name}`, { query: { _pk: id } });
    expect((await socket.frames(2)).map((frame) => (frame as { type: string }).type)).toEqual(["cf_agent_identity", STATE]);
    return socket;
  };

  it("attaches a later object's capabilities only when an event needs the dispatch table", async () => {
    // The class's first object is wired as it is built; it shows that later ones may wait.
    const first = await openRoom(fresh("wake-first"), "first");
    first.send("ping");
    expect(await first.next()).toBe("pong");
    await first.close();

    const name = fresh("wake");
    const stub = room(name);
    const socket = await openRoom(name, "a");
    const other = await openRoom(name, "b");
    expect((await stub.report()).attached).toBe(1); // the upgrade wired it

    // A wake by messages no capability claims attaches nothing, and every handler still works:
    // the reply, State read from a handler, a broadcast.
    await hibernate(stub);
    socket.send("ping");
    expect(await socket.next()).toBe("pong");
    socket.send("count");
    expect(await socket.next()).toBe("count:0");
    socket.send("all");
    expect(await socket.next()).toBe("all");
    expect(await other.next()).toBe("all");
    socket.send(JSON.stringify({ type: "custom", n: 1 })); // JSON of a type nobody claims goes to the handlers
    expect(await socket.next()).toBe('unhandled:{"type":"custom","n":1}');
    expect((await stub.report()).attached).toBe(0);

    // A claimed frame wires it first: the state frame is stored and sent to the other connection.
    socket.send(JSON.stringify(stateFrame({ count: 5 })));
    expect(await other.nextJSON()).toEqual(stateFrame({ count: 5 }));
    expect((await stub.report()).attached).toBe(1);

    // The same for an rpc call as the first message after a wake.
    await hibernate(stub);
    expect(await socket.rpc("add", [2, 3])).toBe(5);
    socket.send("count");
    expect(await socket.next()).toBe("count:5");
    expect((await stub.report()).attached).toBe(1);

    // A close on an object that has not wired yet runs onClose and is reciprocated.
    await hibernate(stub);
    socket.send("ping");
    expect(await socket.next()).toBe("pong");
    expect(await other.close()).toEqual({ code: 1000, reason: "" });
    expect(await stub.report()).toEqual({ attached: 0, closed: "b" });
    await socket.close();
  });

  it("wires a waiting object for a frame whose claim declares it needs that, and builds wired a class whose claim does not", async () => {
    /** Opens `/agents/<agent>/<name>` and reads the identity frame. */
    const join = async (agent: string, name: string) => {
      const socket = await openSocket(worker, `http://example.com/agents/${agent}/${name}`);
      await socket.frames(1);
      return socket;
    };
    // Each class's first object, wired as it is built, shows what later ones may do.
    for (const agent of ["wake-notes", "wake-undeclared"]) {
      const first = await join(agent, fresh("first"));
      first.send(JSON.stringify({ type: "note", text: "first" }));
      expect(await first.next()).toBe("noted:first");
      await first.close();
    }

    // The claim declares that a note needs the object wired: a wake by other messages attaches
    // nothing; a note as the first claimed frame after the wake wires the object, and its claim takes it.
    const declared = fresh("declared");
    const notes = env.WAKE_NOTES.get(env.WAKE_NOTES.idFromName(declared));
    const socket = await join("wake-notes", declared);
    await hibernate(notes);
    socket.send("ping");
    expect(await socket.next()).toBe("pong");
    socket.send(JSON.stringify({ type: "other" }));
    expect(await socket.next()).toBe('unhandled:{"type":"other"}');
    expect((await notes.report()).attached).toBe(0);
    socket.send(JSON.stringify({ type: "note", text: "after" }));
    expect(await socket.next()).toBe("noted:after");
    expect((await notes.report()).attached).toBe(1);
    // The same when the note is the very first message after the wake.
    await hibernate(notes);
    socket.send(JSON.stringify({ type: "note", text: "first after" }));
    expect(await socket.next()).toBe("noted:first after");
    expect((await notes.report()).attached).toBe(1);
    await socket.close();

    // The claim does not declare it: the class's objects never wait, so no note can miss its claim.
    const undeclared = fresh("undeclared");
    const eager = env.WAKE_UNDECLARED.get(env.WAKE_UNDECLARED.idFromName(undeclared));
    const other = await join("wake-undeclared", undeclared);
    await hibernate(eager);
    other.send("ping");
    expect(await other.next()).toBe("pong");
    expect((await eager.report()).attached).toBe(1); // attached as it was built, before the message
    other.send(JSON.stringify({ type: "note", text: "still" }));
    expect(await other.next()).toBe("noted:still");
    await other.close();
  });

  it("attaches at once every object of a class that uses a capability of its own", async () => {
    // The class's first object.
    const socket = await openSocket(worker, `http://example.com/agents/wake-eager/${fresh("eager")}`);
    await socket.frames(1);
    socket.send(JSON.stringify({ type: "shout", text: "hi" }));
    expect(await socket.next()).toBe("HI");
    await socket.close();

    const named = fresh("eager");
    const again = await openSocket(worker, `http://example.com/agents/wake-eager/${named}`);
    await again.frames(1);
    const eager = env.WAKE_EAGER.get(env.WAKE_EAGER.idFromName(named));
    await hibernate(eager);
    again.send("ping");
    expect(await again.next()).toBe("pong");
    expect((await eager.report()).attached).toBe(1); // attached as it was built, before the message
    again.send(JSON.stringify({ type: "shout", text: "still" }));
    expect(await again.next()).toBe("STILL");
    await again.close();
  });

  it("fails every request of an object whose options conflict where the class's first object's did not, with a 500", async () => {
    const logs = captureConsole();
    const ok = await openSocket(worker, `http://example.com/agents/wake-conflict/${fresh("ok")}`);
    await ok.frames(1);
    expect(await ok.rpc("add", [1, 2])).toBe(3);
    await ok.close();

    // A later object waits to be wired; its first request wires it, meets DUPLICATE_CLAIM, and so does every later one.
    const dup = fresh("dup-");
    for (let attempt = 0; attempt < 2; attempt++) {
      const upgrade = await worker.fetch(
        new Request(`http://example.com/agents/wake-conflict/${dup}`, { headers: { Upgrade: "websocket" } }),
      );
      expect(await refusedClose(upgrade)).toEqual({ code: 4500, reason: OPEN_FAILED_REASON });
    }
    expect(logs.error).toHaveLength(2);
    for (const line of logs.error) {
      expect(line).toContain("wake-conflict");
      expect(line).toContain('the method "add" is claimed by Callables and by WebSockets');
    }
  });

  it("attaches at once an object that uses other capabilities than the class's first object", async () => {
    const varying = (name: string) => env.WAKE_VARYING.get(env.WAKE_VARYING.idFromName(name));
    /** Joins `name`, hibernates it, pings. @returns how often that wake attached the WebSockets */
    const attachedOnWake = async (name: string) => {
      const socket = await openSocket(worker, `http://example.com/agents/wake-varying/${name}`);
      await socket.frames(2); // identity and state: WebSockets uses its State itself when the host does not
      await hibernate(varying(name));
      socket.send("ping");
      expect(await socket.next()).toBe("pong");
      const { attached } = await varying(name).report();
      await socket.close();
      return attached;
    };
    // The first object uses State and WebSockets, so later objects that do may wait ...
    expect(await attachedOnWake(fresh("full"))).toBe(0);
    // ... and one that uses WebSockets alone is wired as it is built, and answers as before.
    expect(await attachedOnWake(fresh("bare-"))).toBe(1);
  });
});
