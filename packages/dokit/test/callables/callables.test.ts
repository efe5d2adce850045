import { env, exports, RpcTarget } from "cloudflare:workers";
import { newWebSocketRpcSession } from "capnweb";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { Callables } from "../../src/callables";
import { isDokitError } from "../../src/lifecycle";
import { hibernate, openSocket, type TestSocket } from "../../src/testing";
import { WebSockets } from "../../src/websockets";
import { captureConsole } from "../logs";
import { fresh } from "../helpers";
import { refusedClose } from "../refused-upgrade";
import { OPEN_FAILED_REASON } from "../../src/protocol/close-codes";
import { type RpcEvent, subscribe } from "../../src/observability";
import { type AgentStub } from "../../src/callables";
import { type Counter, TestCallables } from "./objects";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: { fetch(input: Request | string, init?: RequestInit): Promise<Response> } })
  .default;
const url = (binding: string, name: string) => `http://example.com/agents/${binding}/${name}`;
const stubOf = (binding: "call-wrapped" | "call-separate" | "call-passed" | "call-bare", name: string) => {
  const namespace = {
    "call-wrapped": env.CALL_WRAPPED,
    "call-separate": env.CALL_SEPARATE,
    "call-passed": env.CALL_PASSED,
    "call-bare": env.CALL_BARE,
  }[binding];
  return namespace.get(namespace.idFromName(name));
};
type Frame = Record<string, unknown>;

/** Opens a cf-websocket connection and reads its connect sequence (identity, state, welcome). */
async function connect(binding: string, name: string, query: Record<string, string> = {}): Promise<TestSocket> {
  const socket = await openSocket(worker, url(binding, name), { query });
  const [identity] = await socket.frames(binding === "call-bare" ? 2 : 3);
  expect(identity?.type).toBe("cf_agent_identity");
  return socket;
}

/** Sends one rpc frame and returns the raw answer frames for its id, up to the final one. */
async function call(socket: TestSocket, method: string, args: unknown[] = []): Promise<Frame[]> {
  const id = crypto.randomUUID();
  socket.send({ type: "rpc", id, method, args });
  const answers: Frame[] = [];
  for (;;) {
    const frame = await socket.nextJSON();
    if (frame.type !== "rpc" || frame.id !== id) continue;
    answers.push(frame);
    if (frame.success === false || frame.done === true) return answers;
  }
}

/** Polls a host's event log until `predicate` holds. */
async function eventually(read: () => Promise<string[]>, predicate: (log: string[]) => boolean): Promise<string[]> {
  const deadline = Date.now() + 2000;
  for (;;) {
    const log = await read();
    if (predicate(log) || Date.now() > deadline) return log;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const HIDDEN = ["missing", "constructor", "toString", "__proto__", "hasOwnProperty", "valueOf", "arrow", "secret", "shadowed"];

// Both install forms run the same suite.
const FORMS = [
  ["new WebSockets({ callables: target })", "call-wrapped"],
  ["use(new Callables(target)).use(webSockets)", "call-separate"],
  ["new WebSockets({ callables: new Callables(target, { args }) })", "call-passed"],
] as const;

describe.each(FORMS)("cf-websocket calls, %s", (_form, binding) => {
  it("answers results in one frame", async () => {
    const socket = await connect(binding, fresh("result"));
    expect(await call(socket, "add", [2, 3])).toEqual([{ type: "rpc", id: expect.any(String), success: true, done: true, result: 5 }]);
    expect(await socket.rpc("echo", [{ nested: [1, "two", null] }])).toEqual({ nested: [1, "two", null] });
    expect(await socket.rpc("inherited")).toBe("from the base class");
    await socket.close();
  });

  it("omits result for undefined and keeps null", async () => {
    const socket = await connect(binding, fresh("void"));
    const [undefinedAnswer] = await call(socket, "nothing");
    expect(undefinedAnswer).toEqual({ type: "rpc", id: expect.any(String), success: true, done: true });
    expect(Object.hasOwn(undefinedAnswer!, "result")).toBe(false);
    const [nullAnswer] = await call(socket, "nil");
    expect(Object.hasOwn(nullAnswer!, "result")).toBe(true);
    expect(nullAnswer!.result).toBeNull();
    await socket.close();
  });

  it("sends a thrown error's message only, never its stack, and logs the error", async () => {
    const logs = captureConsole();
    const socket = await connect(binding, fresh("throw"));
    expect(await call(socket, "fail", ["it broke"])).toEqual([
      { type: "rpc", id: expect.any(String), success: false, error: "it broke" },
    ]);
    const [later] = await call(socket, "failLater", ["later"]);
    expect(later!.error).toBe("later");
    await socket.close();
    expect(logs).toEqual({
      error: ["dokit: callable fail threw Error: it broke", "dokit: callable failLater threw TypeError: later"],
      warn: [],
      info: [],
    });
  });

  it("answers a Refusal with its message and logs one line instead of an error", async () => {
    const logs = captureConsole();
    const socket = await connect(binding, fresh("refusal"));
    const [answer] = await call(socket, "refuse", ["This board is view-only for you"]);
    expect(answer).toMatchObject({ success: false, error: "This board is view-only for you" });
    await socket.close();
    expect(logs).toEqual({ error: [], warn: [], info: ["dokit: callable refuse refused: This board is view-only for you"] });
  });

  it("answers unknown and hidden names with Method <name> does not exist", async () => {
    const socket = await connect(binding, fresh("hidden"));
    const rpcTargetMembers = Object.getOwnPropertyNames(RpcTarget.prototype).filter((name) => name !== "constructor");
    for (const name of [...HIDDEN, ...rpcTargetMembers]) {
      expect(await call(socket, name), name).toEqual([
        { type: "rpc", id: expect.any(String), success: false, error: `Method ${name} does not exist` },
      ]);
    }
    await socket.close();
  });

  it("streams chunks, then a done frame", async () => {
    const socket = await connect(binding, fresh("stream"));
    const answers = await call(socket, "countdown", [3]);
    expect(answers.map(({ id: _id, ...rest }) => rest)).toEqual([
      { type: "rpc", success: true, done: false, result: 3 },
      { type: "rpc", success: true, done: false, result: 2 },
      { type: "rpc", success: true, done: false, result: 1 },
      { type: "rpc", success: true, done: false, result: 0 },
      { type: "rpc", success: true, done: true },
    ]);
    await socket.close();
  });

  it("sends a failing stream's chunks, then an error frame", async () => {
    const socket = await connect(binding, fresh("broken"));
    expect(await socket.stream("brokenStream")).toEqual({ chunks: [1, 2], error: "stream broke" });
    await socket.close();
  });

  it("refuses an RpcTarget result and a BigInt result with the protocol's texts", async () => {
    const socket = await connect(binding, fresh("refused"));
    const [target] = await call(socket, "counter", [1]);
    expect(target!.error).toBe("Method counter returns an RpcTarget, which only the capnweb transport can carry");
    const [big] = await call(socket, "big");
    expect(big!.success).toBe(false);
    expect(big!.error).toMatch(/^Result is not JSON-serializable: .*BigInt/);
    await socket.close();
  });

  it("answers 50 concurrent calls from one connection by id, in completion order", async () => {
    const socket = await connect(binding, fresh("concurrent"));
    const expected = new Map<string, number>();
    const sent: string[] = [];
    for (let i = 0; i < 50; i++) {
      const id = `call-${i}`;
      expected.set(id, i * 7);
      sent.push(id);
      // Later calls finish first.
      socket.send({ type: "rpc", id, method: "delayed", args: [i * 7, (50 - i) * 2] });
    }
    const frames = await socket.frames(50, 5000);
    expect(new Map(frames.map((frame) => [frame.id as string, frame.result]))).toEqual(expected);
    expect(frames.every((frame) => frame.success === true && frame.done === true)).toBe(true);
    expect(frames.map((frame) => frame.id)).not.toEqual(sent);
    await socket.close();
  });

  it("answers calls after the object hibernated between them", async () => {
    const name = fresh("hibernate");
    const socket = await connect(binding, name, { _pk: "sleeper" });
    const before = (await socket.rpc("whoami")) as { instance: string };
    await hibernate(stubOf(binding, name));
    const after = (await socket.rpc("whoami")) as { instance: string; connection: string; agentIsHost: boolean };
    expect(after.instance).not.toBe(before.instance);
    expect(after).toMatchObject({ connection: "sleeper", agentIsHost: true });
    expect(await socket.rpc("add", [20, 22])).toBe(42);
    await socket.close();
  });

  it("runs each call with getCurrentAgent() returning the object and the calling connection", async () => {
    const name = fresh("context");
    const first = await connect(binding, name, { _pk: "first" });
    const second = await connect(binding, name, { _pk: "second" });
    expect(await first.rpc("whoami")).toMatchObject({ agentIsHost: true, connection: "first" });
    expect(await second.rpc("whoami")).toMatchObject({ agentIsHost: true, connection: "second" });
    await first.close();
    await second.close();
  });

  it("gives every call of a wake its context, synchronous or after the method's own awaits", async () => {
    const name = fresh("context-wake");
    const first = await connect(binding, name, { _pk: "first" });
    const second = await connect(binding, name, { _pk: "second" });
    for (let round = 0; round < 2; round++) {
      // The first, second and third call of each connection in this wake (each enters the context its own way).
      for (let call = 0; call < 3; call++) {
        const [a, b] = await Promise.all([first.rpc("whoamiLater", [5]), second.rpc("whoami")]);
        expect(a).toMatchObject({ agentIsHost: true, connection: "first" });
        expect(b).toMatchObject({ agentIsHost: true, connection: "second" });
      }
      await hibernate(stubOf(binding, name));
    }
    await first.close();
    await second.close();
  });

  it("leaves non-rpc and malformed rpc frames to onMessage", async () => {
    const name = fresh("malformed");
    const socket = await connect(binding, name, { _pk: "m" });
    const malformed = JSON.stringify({ type: "rpc", id: 1, method: "add", args: [1, 2] });
    socket.send(malformed);
    expect(await socket.next()).toBe(`echo:${malformed}`);
    await socket.close();
  });
});

describe.each(["call-separate", "call-passed"])("argument schemas, %s", (binding) => {
  it("rejects an invalid argument with an error naming it, before the method runs", async () => {
    const socket = await connect(binding, fresh("schema"));
    const [answer] = await call(socket, "move", [42, 1]);
    expect(answer!.success).toBe(false);
    expect(answer!.error).toBe("Invalid argument id of move: Invalid input: expected string, received number");
    await socket.close();
  });

  it("passes the parsed (coerced) values to the method", async () => {
    const socket = await connect(binding, fresh("coerce"));
    expect(await socket.rpc("move", ["card-1", "3"])).toEqual({ id: "card-1", column: 3, types: ["string", "number"] });
    const [answer] = await call(socket, "move", ["card-1", "3.5"]);
    expect(answer!.error).toMatch(/^Invalid argument column of move: /);
    await socket.close();
  });
});

describe("argument schemas", () => {
  it("runs unchecked without schemas (the short form here has none)", async () => {
    const socket = await connect("call-wrapped", fresh("unchecked"));
    expect(await socket.rpc("move", ["card-1", "3"])).toEqual({ id: "card-1", column: "3", types: ["string", "string"] });
    await socket.close();
  });

  it("refuses schemas for names the target does not expose, and values that are not schemas", () => {
    const host = { instance: "x", events: [] };
    expect(() => new Callables(new TestCallables(host), { args: { arrow: { a: z.string() } } as never })).toThrow(
      /argument schemas name "arrow"/,
    );
    expect(() => new Callables(new TestCallables(host), { args: { add: { a: "string" as never } } })).toThrow(
      /argument "a" of add is not a Standard Schema/,
    );
  });
});

describe("callables targets", () => {
  class Thenable extends RpcTarget {
    then(): void {}
  }
  class Pipe extends RpcTarget {
    __cf_agent_send(): void {}
  }
  class DeepThen extends Thenable {
    ok(): void {}
  }

  it("refuses a target that declares then or __cf_agent_send, in both install forms", () => {
    for (const Target of [Thenable, Pipe, DeepThen]) {
      let caught: unknown;
      try {
        new Callables(new Target());
      } catch (error) {
        caught = error;
      }
      expect(isDokitError(caught, "INVALID_TARGET"), Target.name).toBe(true);
      expect(() => new WebSockets({ callables: new Target() }), Target.name).toThrow(/may not expose/);
    }
  });

  it("hides names that RpcTarget.prototype defines, even when the target's class declares them", () => {
    // workerd's RpcTarget.prototype has no string-named member besides `constructor` today;
    // add one for this test to check the rule, and remove it again.
    class Platform extends RpcTarget {
      platformMember(): string {
        return "shadows the platform";
      }
      own(): void {}
    }
    Object.defineProperty(RpcTarget.prototype, "platformMember", { value: () => "platform", configurable: true });
    try {
      expect(new Callables(new Platform()).methodNames).toEqual(["own"]);
    } finally {
      Reflect.deleteProperty(RpcTarget.prototype, "platformMember");
    }
    // Method tables are built once per class: a class first used after the platform member is gone exposes it.
    class Later extends Platform {}
    expect(new Callables(new Later()).methodNames).toEqual(["platformMember", "own"]);
  });

  it("refuses a target that is not an RpcTarget", () => {
    expect(() => new Callables({ add: () => 1 })).toThrow(/extends RpcTarget/);
    // Also after the method table of an RpcTarget class was built (the check runs before the lookup's miss).
    new Callables(new TestCallables({ instance: "x", events: [] }));
    for (const [label, target] of Object.entries({ null: null, undefined, number: 42, string: "text", bare: Object.create(null) })) {
      let caught: unknown;
      try {
        new Callables(target as never);
      } catch (error) {
        caught = error;
      }
      expect(isDokitError(caught, "INVALID_TARGET"), label).toBe(true);
    }
  });

  it("exposes exactly the prototype methods below RpcTarget", () => {
    const callables = new Callables(new TestCallables({ instance: "x", events: [] }));
    expect(callables.methodNames.sort()).toEqual(
      [
        "add",
        "big",
        "brokenStream",
        "counter",
        "countdown",
        "delayed",
        "echo",
        "fail",
        "failLater",
        "inherited",
        "move",
        "nil",
        "nothing",
        "refuse",
        "whoami",
        "whoamiLater",
      ].sort(),
    );
  });
});

describe("types", () => {
  it("infers the client interface from the target class", () => {
    type Remote = AgentStub<TestCallables>;
    expectTypeOf<Remote["add"]>().toEqualTypeOf<(a: number, b: number) => Promise<number>>();
    expectTypeOf<Remote["echo"]>().toEqualTypeOf<(value: unknown) => Promise<unknown>>();
    expectTypeOf<Remote["counter"]>().toEqualTypeOf<(start: number) => Promise<Counter>>();
    expectTypeOf<Remote>().not.toHaveProperty("toString");
    expectTypeOf<Remote>().not.toHaveProperty("secret");
  });

  it("keys argument schemas by method name", () => {
    const host = { instance: "x", events: [] };
    // @ts-expect-error -- not a method of TestCallables
    expect(() => new Callables(new TestCallables(host), { args: { nope: {} } })).toThrow(/argument schemas name "nope"/);
  });
});

describe("an object with WebSockets but no callables", () => {
  it("answers every rpc frame with Method <name> does not exist", async () => {
    const socket = await connect("call-bare", fresh("bare"));
    expect(await call(socket, "add", [1, 2])).toEqual([
      { type: "rpc", id: expect.any(String), success: false, error: "Method add does not exist" },
    ]);
    await socket.close();
  });

  it("refuses a Cap'n Web upgrade with the one-line fix, as a 4505 close", async () => {
    const response = await worker.fetch(`${url("call-bare", fresh("nocap"))}?__agents_transport=capnweb`, {
      headers: { Upgrade: "websocket" },
    });
    const { code, reason } = await refusedClose(response);
    expect(code).toBe(4505);
    expect(reason).toContain('capnweb from "dokit/capnweb"');
    expect(reason).toContain("new WebSockets({ ..., capnweb })");
  });
});

// ------------------------------------------------------------------ Cap'n Web

/** The server's main object, untyped here: the callables plus the pipe, checked remotely. */
// biome-ignore lint/suspicious/noExplicitAny: pipelined stubs are easiest to drive untyped in tests
type Remote = Record<string, any>;

/** The client's main object: the server delivers every frame by calling message(frame). */
class Inbox extends RpcTarget {
  readonly frames: unknown[] = [];
  #waiters: (() => void)[] = [];
  message(frame: unknown): void {
    this.frames.push(frame);
    for (const wake of this.#waiters.splice(0)) wake();
  }
  /** @returns the frames received so far, once at least `count` arrived */
  async atLeast(count: number, timeout = 2000): Promise<unknown[]> {
    const deadline = Date.now() + timeout;
    while (this.frames.length < count) {
      if (Date.now() > deadline) throw new Error(`only ${this.frames.length} of ${count} frames arrived: ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 20);
      });
    }
    return this.frames;
  }
}

interface CapnwebClient {
  main: Remote;
  inbox: Inbox;
  ws: WebSocket;
  closed: Promise<{ code: number; reason: string }>;
  close(code?: number, reason?: string): Promise<{ code: number; reason: string }>;
}

/** Opens a Cap'n Web session through the worker with capnweb's own client. */
async function openCapnweb(binding: string, name: string, query: Record<string, string> = {}): Promise<CapnwebClient> {
  const target = new URL(url(binding, name));
  target.searchParams.set("__agents_transport", "capnweb");
  for (const [key, value] of Object.entries(query)) target.searchParams.set(key, value);
  const response = await worker.fetch(target.toString(), { headers: { Upgrade: "websocket" } });
  const ws = response.webSocket;
  if (!ws) throw new Error(`upgrade refused: ${response.status} ${await response.text()}`);
  ws.accept();
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason })),
  );
  const inbox = new Inbox();
  // SAFETY: see Remote.
  const main = newWebSocketRpcSession(ws, inbox) as unknown as Remote;
  return {
    main,
    inbox,
    ws,
    closed,
    close: (code = 1000, reason = "") => {
      try {
        ws.close(code, reason);
      } catch {
        // Already closed.
      }
      return closed;
    },
  };
}

describe("Cap'n Web calls with dokit/observability installed", () => {
  it("publish rpc and rpc:error on agents:rpc, with the method, the connection and the outcome, as rpc frames do", async () => {
    const logs = captureConsole();
    const events: RpcEvent[] = [];
    const name = fresh("observed");
    const unsubscribe = subscribe("rpc", (event) => void (event.name === name && events.push(event)));
    try {
      const client = await openCapnweb("call-separate", name, { _pk: "cap-observed" });
      expect(await client.main.add(2, 3)).toBe(5);
      await expect(client.main.fail("observed failure")).rejects.toThrow("observed failure");
      await client.close();
    } finally {
      unsubscribe();
    }
    expect(events.map((event) => [event.type, event.agent, event.payload.method, event.payload.connectionId, event.payload.ok])).toEqual([
      ["rpc", "CallSeparate", "add", "cap-observed", true],
      ["rpc", "CallSeparate", "fail", "cap-observed", false],
      ["rpc:error", "CallSeparate", "fail", "cap-observed", false],
    ]);
    expect(events[2]?.payload).toMatchObject({ error: "observed failure", durationMs: expect.any(Number) });
    expect(logs.error).toEqual(["dokit: callable fail threw Error: observed failure"]);
  });
});

describe.each(FORMS)("Cap'n Web transport, %s", (_form, binding) => {
  it("delivers identity, state and onConnect's frames through the client's message()", async () => {
    const name = fresh("frames");
    const client = await openCapnweb(binding, name, { _pk: "cap-1", room: "blue" });
    const frames = await client.inbox.atLeast(3);
    expect(frames.slice(0, 3)).toEqual([
      JSON.stringify({ type: "cf_agent_identity", name, agent: binding, stateFollows: true }),
      JSON.stringify({ type: "cf_agent_state", state: { count: 1 } }),
      JSON.stringify({ type: "welcome", tags: ["cap-1", "room:blue"] }),
    ]);
    // A broadcast reaches the session too.
    await stubOf(binding, name).broadcast("to everyone");
    expect((await client.inbox.atLeast(4))[3]).toBe("to everyone");
    await client.close();
  });

  it("calls callables natively, with the object and the connection in context", async () => {
    const logs = captureConsole();
    const client = await openCapnweb(binding, fresh("native"), { _pk: "cap-ctx" });
    expect(await client.main.add(2, 3)).toBe(5);
    expect(await client.main.inherited()).toBe("from the base class");
    expect(await client.main.whoami()).toMatchObject({ agentIsHost: true, connection: "cap-ctx" });
    await expect(client.main.fail("native failure")).rejects.toThrow("native failure");
    await client.close();
    expect(logs.error).toEqual(["dokit: callable fail threw Error: native failure"]);
  });

  it("returns an RpcTarget as a live stub", async () => {
    const client = await openCapnweb(binding, fresh("stub"), { _pk: "cap-stub" });
    const counter = await client.main.counter(1);
    expect(await counter.increment()).toBe(2);
    expect(await counter.increment(5)).toBe(7);
    expect(await counter.value()).toBe(7);
    expect(await counter.caller()).toBe("cap-stub");
    counter[Symbol.dispose]();
    await client.close();
  });

  it("pipelines a call on a result that has not arrived yet", async () => {
    const client = await openCapnweb(binding, fresh("pipeline"));
    const counter = client.main.counter(10);
    expect(await counter.increment(5)).toBe(15);
    await client.close();
  });

  it("streams a ReadableStream result", async () => {
    const client = await openCapnweb(binding, fresh("capstream"));
    const stream = (await client.main.countdown(3)) as ReadableStream<number>;
    const chunks: number[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks).toEqual([3, 2, 1, 0]);
    await client.close();
  });

  it("dispatches frames sent through __cf_agent_send like a hibernating socket's", async () => {
    const name = fresh("pipe");
    const client = await openCapnweb(binding, name, { _pk: "cap-pipe" });
    await client.inbox.atLeast(3);
    await client.main.__cf_agent_send("hello");
    expect(await stubOf(binding, name).log()).toContain("message:cap-pipe:hello");
    expect((await client.inbox.atLeast(4))[3]).toBe("echo:hello");
    // A JSON rpc frame through the pipe is answered through message().
    await client.main.__cf_agent_send(JSON.stringify({ type: "rpc", id: "r1", method: "add", args: [1, 2] }));
    expect(JSON.parse((await client.inbox.atLeast(5))[4] as string)).toEqual({
      type: "rpc",
      id: "r1",
      success: true,
      done: true,
      result: 3,
    });
    await client.close();
  });

  it("lists the session in getConnections() while open, and runs onClose on disconnect", async () => {
    const name = fresh("lifetime");
    const stub = stubOf(binding, name);
    const client = await openCapnweb(binding, name, { _pk: "cap-life" });
    await client.inbox.atLeast(3);
    expect(await stub.connectionIds()).toEqual(["cap-life"]);
    await client.close(4000, "bye");
    const log = await eventually(
      () => stub.log(),
      (events) => events.includes("close:cap-life:4000:bye"),
    );
    expect(log).toEqual(["connect:cap-life", "close:cap-life:4000:bye"]);
    expect(await stub.connectionIds()).toEqual([]);
  });

  it("closes a session whose onConnect throws with 4500, logs why, and does not list it", async () => {
    const logs = captureConsole();
    const name = fresh("failconnect");
    const stub = stubOf(binding, name);
    const client = await openCapnweb(binding, name, { _pk: "cap-fail", failConnect: "1" });
    expect(await client.closed).toEqual({ code: 4500, reason: OPEN_FAILED_REASON });
    expect(await stub.connectionIds()).toEqual([]);
    expect(await stub.log()).toEqual([`close:cap-fail:4500:${OPEN_FAILED_REASON}`]);
    expect(logs.error).toEqual(["dokit: Cap'n Web connection cap-fail failed while opening; closing it with 4500 Error: onConnect refused"]);
  });

  it("replaces a session with the same id (1001 Session replaced)", async () => {
    const name = fresh("replace");
    const stub = stubOf(binding, name);
    const first = await openCapnweb(binding, name, { _pk: "same" });
    await first.inbox.atLeast(3);
    const second = await openCapnweb(binding, name, { _pk: "same" });
    expect(await first.closed).toEqual({ code: 1001, reason: "Session replaced" });
    expect(await second.main.add(1, 1)).toBe(2);
    expect(await stub.log()).toEqual(["connect:same", "close:same:1001:Session replaced", "connect:same"]);
    expect(await stub.connectionIds()).toEqual(["same"]);
    await second.close();
  });

  it("keeps one connection per id across transports: the newer one replaces the older (4009 Connection replaced for a hibernating one)", async () => {
    const name = fresh("mixed");
    const stub = stubOf(binding, name);
    const socket = await connect(binding, name, { _pk: "mixed" });
    const session = await openCapnweb(binding, name, { _pk: "mixed" });
    await session.inbox.atLeast(2);
    expect(await socket.closed).toEqual({ code: 4009, reason: "Connection replaced" });
    expect(await stub.connectionIds()).toEqual(["mixed"]);
    expect(await session.main.add(1, 1)).toBe(2);
    const again = await connect(binding, name, { _pk: "mixed" });
    expect(await session.closed).toEqual({ code: 4009, reason: "Connection replaced" });
    expect(await stub.connectionIds()).toEqual(["mixed"]);
    await again.close();
  });

  it("checks argument schemas where they are installed", async () => {
    const client = await openCapnweb(binding, fresh("capschema"));
    if (binding !== "call-wrapped") {
      await expect(client.main.move(42, 1)).rejects.toThrow(/^Invalid argument id of move: /);
      expect(await client.main.move("c", "2")).toEqual({ id: "c", column: 2, types: ["string", "number"] });
    } else {
      expect(await client.main.move("c", "2")).toEqual({ id: "c", column: "2", types: ["string", "string"] });
    }
    await client.close();
  });
});
