import { env, exports } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { connectionAttachment, hibernate, openSocket, type TestSocket } from "../../src/testing";
import { connectionTags } from "../../src/websockets/tags";
import { OPEN_FAILED_REASON } from "../../src/protocol/close-codes";
import { captureConsole } from "../logs";
import { fresh } from "../helpers";
import { publicIdOf } from "../public-id";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: { fetch(input: Request | string, init?: RequestInit): Promise<Response> } })
  .default;
const url = (binding: string, name: string, rest = "") => `http://example.com/agents/${binding}/${name}${rest}`;
const open = (binding: string, name: string, query: Record<string, string> = {}) =>
  openSocket(worker, url(binding, name), { query });

/** Opens a protocol-enabled room socket and reads its connect sequence (identity, state, welcome). */
async function joinRoom(name: string, query: Record<string, string> = {}): Promise<TestSocket> {
  const socket = await open("ws-room", name, query);
  await socket.frames(3);
  return socket;
}

describe("connect sequence", () => {
  it("sends identity (with stateFollows), then state, then what onConnect sends", async () => {
    const name = fresh("seq");
    const socket = await open("ws-room", name, { _pk: "conn-1", room: "lobby" });
    expect(await socket.next()).toBe(JSON.stringify({ type: "cf_agent_identity", name, agent: "ws-room", stateFollows: true }));
    expect(await socket.next()).toBe(JSON.stringify({ type: "cf_agent_state", state: { count: 0 } }));
    expect(await socket.nextJSON()).toEqual({
      type: "welcome",
      id: "conn-1",
      tags: ["conn-1", "room:lobby"],
      uri: `${url("ws-room", name)}?_pk=conn-1&room=lobby`,
      contextOk: true,
    });
    expect(await socket.drain()).toEqual([]);
    await socket.close();
  });

  it("sends the frames other capabilities add with claims.connectFrames after identity and state", async () => {
    const logs = captureConsole();
    const name = fresh("extra");
    const socket = await open("ws-room", name, { extra: "1" });
    const types = (await socket.frames(4)).map((frame) => (frame as { type: string }).type);
    expect(types).toEqual(["cf_agent_identity", "cf_agent_state", "extra", "welcome"]);
    await socket.close();

    // A source that throws fails the connection like onConnect does: 4500, no frames, no ghost.
    const refused = await open("ws-room", name, { extra: "throw", _pk: "refused" });
    expect(await refused.closed).toEqual({ code: 4500, reason: OPEN_FAILED_REASON });
    expect(await refused.drain()).toEqual([]);
    const ids = await runInDurableObject(env.WS_ROOM.get(env.WS_ROOM.idFromName(name)), (instance) =>
      [...instance.webSockets.getConnections()].map((c) => c.id),
    );
    expect(ids).not.toContain("refused");
    expect(logs.error).toEqual([
      "dokit: connection refused failed while opening; refusing it with 4500 Error: the connect frame source failed",
    ]);
  });

  it("omits stateFollows when there is no state, and generates an id without _pk", async () => {
    const name = fresh("bare");
    const socket = await open("ws-bare", name);
    expect(await socket.nextJSON()).toEqual({ type: "cf_agent_identity", name, agent: "ws-bare" });
    expect(await socket.drain()).toEqual([]);
    const ids = await runInDurableObject(env.WS_BARE.get(env.WS_BARE.idFromName(name)), (instance) =>
      [...instance.webSockets.getConnections()].map((c) => c.id),
    );
    expect(ids).toHaveLength(1);
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    await socket.close();
  });
});

describe("a connection nothing receives while it opens", () => {
  // workerd may drop a socket's JavaScript object while it idles only if nothing changed it; dokit
  // leaves such a socket as it is until its first event (bench: "isolate heap per connection").
  const decorated = (stub: DurableObjectStub) => runInDurableObject(stub, (_instance, ctx) => ctx.getWebSockets().map((ws) => "setState" in ws));

  it("opens with the same frames, left as the runtime made it; its first message makes it a Connection with its flags", async () => {
    const name = fresh("plain");
    const stub = env.WS_PLAIN.get(env.WS_PLAIN.idFromName(name));
    const socket = await open("ws-plain", name, { _pk: "plain-1" });
    expect(await socket.next()).toBe(JSON.stringify({ type: "cf_agent_identity", name, agent: "ws-plain", stateFollows: true }));
    expect(await socket.next()).toBe(JSON.stringify({ type: "cf_agent_state", state: { count: 0 } }));
    expect(await decorated(stub)).toEqual([false]);
    socket.send("who");
    expect(await socket.nextJSON()).toEqual({ id: "plain-1", tags: ["plain-1"], uri: `${url("ws-plain", name)}?_pk=plain-1`, state: null });
    expect(await decorated(stub)).toEqual([true]);
    await socket.close();

    // A connection that onConnect receives is made a Connection as it opens.
    const room = fresh("decorated");
    const joined = await joinRoom(room);
    expect(await decorated(env.WS_ROOM.get(env.WS_ROOM.idFromName(room)))).toEqual([true]);
    await joined.close();
  });

  it("is refused with 4500 like any other when its connect frames fail, and leaves no ghost", async () => {
    const logs = captureConsole();
    const name = fresh("plain-broken");
    const stub = env.WS_PLAIN.get(env.WS_PLAIN.idFromName(name));
    await stub.breakState();
    const refused = await open("ws-plain", name, { _pk: "plain-refused" });
    expect(await refused.closed).toEqual({ code: 4500, reason: OPEN_FAILED_REASON });
    expect(await refused.drain()).toEqual([]);
    expect(await runInDurableObject(stub, (instance) => [...instance.webSockets.getConnections()].map((c) => c.id))).toEqual([]);
    expect(logs.error).toEqual(["dokit: connection plain-refused failed while opening; refusing it with 4500 Error: the state could not be read"]);
  });
});

describe("connections and tags", () => {
  it("finds open connections by tag and by id", async () => {
    const name = fresh("tags");
    const a = await joinRoom(name, { _pk: "a", room: "red" });
    const b = await joinRoom(name, { _pk: "b", room: "blue" });
    const c = await joinRoom(name, { _pk: "c", room: "red", tags: "vip" });
    const stub = env.WS_ROOM.get(env.WS_ROOM.idFromName(name));
    expect(await stub.ids()).toEqual(["a", "b", "c"]);
    expect(await stub.ids("room:red")).toEqual(["a", "c"]);
    expect(await stub.ids("vip")).toEqual(["c"]);
    expect(await stub.connection("b")).toEqual({ id: "b", tags: ["b", "room:blue"], state: null });
    expect(await stub.connection("nobody")).toBeNull();
    await b.close();
    expect(await stub.ids()).toEqual(["a", "c"]);
    await a.close();
    await c.close();
  });

  it("counts the open connections as getConnections lists them, through closes from either side and a wake", async () => {
    const name = fresh("count");
    const stub = env.WS_ROOM.get(env.WS_ROOM.idFromName(name));
    const a = await joinRoom(name, { _pk: "a" });
    expect(await stub.count()).toEqual({ count: 1, listed: 1 });
    // Counted on from the kept count as each one joins.
    const b = await joinRoom(name, { _pk: "b" });
    expect(await stub.count()).toEqual({ count: 2, listed: 2 });
    const c = await joinRoom(name, { _pk: "c" });
    expect(await stub.count()).toEqual({ count: 3, listed: 3 });
    // A second connection with an id replaces the first: still 3.
    const c2 = await joinRoom(name, { _pk: "c" });
    expect(await c.closed).toMatchObject({ code: 4009 });
    expect(await stub.count()).toEqual({ count: 3, listed: 3 });
    await b.close();
    expect(await stub.count()).toEqual({ count: 2, listed: 2 });
    // Closed by server code in the same turn as two counts: the second one sees it gone.
    expect(await stub.closeAndCount("c")).toEqual({ before: 2, after: 1, listed: 1 });
    expect(await c2.closed).toEqual({ code: 4000, reason: "closed by the server" });
    await hibernate(stub);
    expect(await stub.count()).toEqual({ count: 1, listed: 1 });
    const d = await joinRoom(name, { _pk: "d" });
    expect(await stub.count()).toEqual({ count: 2, listed: 2 });
    await Promise.all([a.close(), d.close()]);
    expect(await stub.count()).toEqual({ count: 0, listed: 0 });
  });

  it("refuses more than 10 tags, and empty or over-long tags, with a clear error", async () => {
    const logs = captureConsole();
    const name = fresh("badtags");
    const tooMany = Array.from({ length: 10 }, (_, i) => `t${i}`).join(",");
    // Refused as every failure while opening is: a socket already closed with 4500, the error logged.
    for (const [i, tags] of [tooMany, "ok,,x", "x".repeat(257)].entries()) {
      const refused = await open("ws-room", name, { tags, _pk: `bad-${i}` });
      expect(await refused.closed).toEqual({ code: 4500, reason: OPEN_FAILED_REASON });
    }
    const limits = 'getConnectionTags must return an array of at most 9 non-empty strings of at most 256 characters, none starting with "_pk:" or "_plugin:"';
    expect(logs.error).toEqual(
      [0, 1, 2].map((i) =>
        expect.stringContaining(`dokit: connection bad-${i} failed while opening; refusing it with 4500 DokitError: dokit: ${limits}; got [`),
      ),
    );
    const nine = Array.from({ length: 9 }, (_, i) => `t${i}`).join(",");
    const ok = await open("ws-room", name, { tags: nine, _pk: "max" });
    await ok.frames(3);
    expect(await env.WS_ROOM.get(env.WS_ROOM.idFromName(name)).ids("t8")).toEqual(["max"]);
    await ok.close();
  });

  it("states the limits and shows what getConnectionTags returned", () => {
    const refusal = (tags: unknown) => {
      try {
        connectionTags("id", tags);
        return "accepted";
      } catch (error) {
        return `${(error as { code: string }).code}: ${(error as Error).message}`;
      }
    };
    const limits = 'getConnectionTags must return an array of at most 9 non-empty strings of at most 256 characters, none starting with "_pk:" or "_plugin:"';
    expect(refusal(Array.from({ length: 10 }, (_, i) => `t${i}`))).toBe(
      `INVALID_TAGS: dokit: ${limits}; got ["t0","t1","t2","t3","t4","t5","t6","t7","t8","t9"]`,
    );
    expect(refusal(["ok", ""])).toBe(`INVALID_TAGS: dokit: ${limits}; got ["ok",""]`);
    expect(refusal([7])).toBe(`INVALID_TAGS: dokit: ${limits}; got [7]`);
    expect(refusal("room")).toBe(`INVALID_TAGS: dokit: ${limits}; got "room"`);
    expect(refusal(["x".repeat(257)])).toBe(`INVALID_TAGS: dokit: ${limits}; got ["${"x".repeat(78)}`);
    // The id's namespace in the runtime's tag list: no user tag can be a connection's id tag.
    expect(refusal(["_pk:someone"])).toBe(`INVALID_TAGS: dokit: ${limits}; got ["_pk:someone"]`);
    // The plug-ins' namespace (Yjs tags its connections there): no user tag can be one.
    expect(refusal(["_plugin:yjs"])).toBe(`INVALID_TAGS: dokit: ${limits}; got ["_plugin:yjs"]`);
    // A connection a plug-in serves carries its tag too, so one user tag fewer fits.
    const eight = Array.from({ length: 8 }, (_, i) => `t${i}`);
    expect(connectionTags("id", eight, 1)).toEqual(["id", ...eight]);
    expect(() => connectionTags("id", [...eight, "t8"], 1)).toThrow(/at most 8 non-empty strings/);
    expect(connectionTags("id", ["a", "b"])).toEqual(["id", "a", "b"]);
    expect(connectionTags("_pk:id", ["a"])).toEqual(["_pk:id", "a"]);
  });

  it("broadcasts once-serialized messages to everyone, except some, or to one tag", async () => {
    const name = fresh("bcast");
    const a = await joinRoom(name, { _pk: "a", room: "red" });
    const b = await joinRoom(name, { _pk: "b", room: "blue" });
    const c = await joinRoom(name, { _pk: "c", room: "red" });
    a.send(`!broadcast ${JSON.stringify({ text: "to-all-but-b", except: "b" })}`);
    expect(await a.next()).toBe("to-all-but-b");
    expect(await a.nextJSON()).toMatchObject({ command: "broadcast" });
    expect(await c.next()).toBe("to-all-but-b");
    expect(await b.drain()).toEqual([]);
    b.send(`!broadcast ${JSON.stringify({ text: "reds", tag: "room:red" })}`);
    expect(await b.nextJSON()).toMatchObject({ command: "broadcast" });
    expect(await a.next()).toBe("reds");
    expect(await c.next()).toBe("reds");
    expect(await b.drain()).toEqual([]);
    await Promise.all([a.close(), b.close(), c.close()]);
  });
});

describe("handlers", () => {
  it("runs added handlers first; an added onMessage returning true claims the message", async () => {
    const socket = await joinRoom(fresh("chain"));
    socket.send("ping");
    expect(await socket.next()).toBe("pong");
    socket.send("hello");
    expect(await socket.next()).toBe("echo:hello");
    await socket.close();
  });

  it("runs onMessage in the object's context with the connection", async () => {
    const socket = await joinRoom(fresh("ctx"));
    socket.send("!context");
    expect(await socket.nextJSON()).toEqual({ type: "reply", command: "context", value: true });
    await socket.close();
  });

  it("keeps each connection's context in work that outlives the handler, also after a wake", async () => {
    const name = fresh("ctx-later");
    const stub = env.WS_ROOM.get(env.WS_ROOM.idFromName(name));
    const first = await joinRoom(name, { _pk: "first" });
    const second = await joinRoom(name, { _pk: "second" });
    for (let round = 0; round < 2; round++) {
      first.send("!contextLater 30");
      second.send("!contextLater 0");
      second.send("!context");
      const replies = [await second.nextJSON(), await second.nextJSON()];
      expect(replies).toEqual(
        expect.arrayContaining([
          { type: "reply", command: "contextLater", value: true },
          { type: "reply", command: "context", value: true },
        ]),
      );
      expect(await first.nextJSON()).toEqual({ type: "reply", command: "contextLater", value: true });
      await hibernate(stub);
    }
    await first.close();
    await second.close();
  });

  it("reciprocates a client's close with the same code and runs onClose", async () => {
    const name = fresh("close");
    const socket = await joinRoom(name, { _pk: "closer" });
    expect(await socket.close(4001, "bye")).toEqual({ code: 4001, reason: "bye" });
    const stub = env.WS_ROOM.get(env.WS_ROOM.idFromName(name));
    await expect.poll(() => stub.closeLog()).toEqual([{ id: "closer", code: 4001, reason: "bye" }]);
  });

  it("closes a connection whose onConnect throws with 4500, sends no stack, and leaves no ghost", async () => {
    const logs = captureConsole();
    const name = fresh("fail");
    const failed = await open("ws-failing", name, { _pk: "bad", fail: "1" });
    const close = await failed.closed;
    expect(close).toEqual({ code: 4500, reason: OPEN_FAILED_REASON });
    // The client gets a socket closed with 4500 and nothing else: no connect frames, no stack.
    expect(await failed.drain()).toEqual([]);
    const good = await open("ws-failing", name, { _pk: "good" });
    await good.next(); // identity
    const stub = env.WS_FAILING.get(env.WS_FAILING.idFromName(name));
    expect(await stub.ids()).toEqual(["good"]);
    good.send("still fine");
    expect(await good.next()).toBe("ok:still fine");
    await good.close();
    // The error, stack included, goes to the server's log instead.
    expect(logs.error).toEqual(["dokit: connection bad failed while opening; refusing it with 4500 Error: secret failure details"]);
  });

  it("closes every connection with 1001 when the object is destroyed", async () => {
    const name = fresh("destroy");
    const a = await joinRoom(name);
    const b = await joinRoom(name);
    await env.WS_ROOM.get(env.WS_ROOM.idFromName(name)).destroy();
    expect(await a.closed).toEqual({ code: 1001, reason: "Durable Object destroyed" });
    expect(await b.closed).toEqual({ code: 1001, reason: "Durable Object destroyed" });
  });
});

describe("state sync, readonly and protocol", () => {
  it("sends a client's state change to other protocol clients, not back to the sender", async () => {
    const name = fresh("sync");
    const a = await joinRoom(name);
    const b = await joinRoom(name);
    const sensor = await open("ws-room", name, { client: "sensor" });
    await sensor.next(); // welcome only
    a.send({ type: "cf_agent_state", state: { count: 5 } });
    expect(await b.nextJSON()).toEqual({ type: "cf_agent_state", state: { count: 5 } });
    expect(await a.drain()).toEqual([]);
    expect(await sensor.drain()).toEqual([]);
    await Promise.all([a.close(), b.close(), sensor.close()]);
  });

  it("refuses a readonly connection's state frame with the exact error frame", async () => {
    const name = fresh("ro");
    const viewer = await joinRoom(name, { mode: "view" });
    const other = await joinRoom(name);
    viewer.send({ type: "cf_agent_state", state: { count: 99 } });
    expect(await viewer.next()).toBe(JSON.stringify({ type: "cf_agent_state_error", error: "Connection is readonly" }));
    expect(await other.drain()).toEqual([]);
    await Promise.all([viewer.close(), other.close()]);
  });

  it("gives suppressed connections no protocol frames from 100 state broadcasts, but user broadcasts and rpc answers", async () => {
    const name = fresh("suppressed");
    const sensor = await open("ws-room", name, { client: "sensor", _pk: "sensor" });
    expect(await sensor.nextJSON()).toMatchObject({ type: "welcome", id: "sensor" });
    const watcher = await joinRoom(name);
    const stub = env.WS_ROOM.get(env.WS_ROOM.idFromName(name));
    for (let i = 1; i <= 100; i++) await stub.setServerState({ count: i });
    const watched = await watcher.frames(100);
    expect(watched.at(-1)).toEqual({ type: "cf_agent_state", state: { count: 100 } });
    expect(await sensor.drain(100)).toEqual([]);
    watcher.send(`!broadcast ${JSON.stringify({ text: "hello devices" })}`);
    expect(await sensor.next()).toBe("hello devices");
    expect(await sensor.stream("anything")).toEqual({ chunks: [], error: "Method anything does not exist" });
    await Promise.all([sensor.close(), watcher.close()]);
  });

  it("lets protocol: false hosts drive the connect sequence and apply state frames themselves", async () => {
    const name = fresh("manual");
    const socket = await open("ws-manual", name);
    expect(await socket.next()).toBe("before-frames");
    expect(await socket.nextJSON()).toEqual({ type: "cf_agent_identity", name, agent: "custom-agent", stateFollows: true });
    expect(await socket.nextJSON()).toEqual({ type: "cf_agent_state", state: { online: 0 } });
    socket.send({ type: "cf_agent_state", state: { online: 3 } });
    expect(await socket.next()).toBe("applied");
    expect(await env.WS_MANUAL.get(env.WS_MANUAL.idFromName(name)).value()).toEqual({ online: 3 });
    socket.send("plain");
    expect(await socket.next()).toBe("manual:plain");
    await socket.close();
  });

  it("lets the object promote a readonly connection over DO RPC", async () => {
    const name = fresh("promote");
    const viewer = await joinRoom(name, { mode: "view", _pk: "v" });
    expect(await env.WS_ROOM.get(env.WS_ROOM.idFromName(name)).promote("v")).toBe(true);
    viewer.send({ type: "cf_agent_state", state: { count: 7 } });
    expect(await viewer.drain()).toEqual([]);
    viewer.send("!flags");
    expect(await viewer.nextJSON()).toMatchObject({ value: { readonly: false, protocol: true } });
    await viewer.close();
  });
});

describe("hibernation", () => {
  it("keeps readonly and protocol flags when setState is the first thing after a wake", async () => {
    const name = fresh("wake-set");
    const stub = env.WS_ROOM.get(env.WS_ROOM.idFromName(name));
    const viewer = await joinRoom(name, { mode: "view", _pk: "viewer" });
    const sensor = await open("ws-room", name, { client: "sensor", _pk: "sensor" });
    await sensor.next();
    await hibernate(stub);
    viewer.send(`!setState ${JSON.stringify({ nick: "ada" })}`);
    expect(await viewer.nextJSON()).toEqual({ type: "reply", command: "setState", value: { nick: "ada" } });
    sensor.send(`!setState ${JSON.stringify({ device: 7 })}`);
    expect(await sensor.nextJSON()).toMatchObject({ value: { device: 7 } });
    await hibernate(stub);
    viewer.send({ type: "cf_agent_state", state: { count: 1 } });
    expect(await viewer.nextJSON()).toEqual({ type: "cf_agent_state_error", error: "Connection is readonly" });
    sensor.send("!flags");
    expect(await sensor.nextJSON()).toMatchObject({ value: { readonly: false, protocol: false } });
    viewer.send("!readState");
    expect(await viewer.nextJSON()).toEqual({ type: "reply", command: "readState", value: { nick: "ada" } });
    await Promise.all([viewer.close(), sensor.close()]);
  });

  it("stores an attachment without user state as a string, and one with user state whole", async () => {
    const name = fresh("forms");
    const stub = env.WS_ROOM.get(env.WS_ROOM.idFromName(name));
    const socket = await joinRoom(name, { _pk: "former", mode: "view" });
    const stored = () => runInDurableObject(stub, (_instance, ctx) => (ctx.getWebSockets()[0] as WebSocket).deserializeAttachment() as unknown);
    const flags = { id: "former", pub: publicIdOf("former"), tags: ["former"], uri: `${url("ws-room", name)}?_pk=former&mode=view`, readonly: true, protocol: true };
    expect(await stored()).toBe(`\u0000dokit\u0000${JSON.stringify(flags)}`);
    socket.send(`!setState ${JSON.stringify({ n: 1 })}`);
    await socket.next();
    expect(await stored()).toEqual({ __dokit: flags, user: { n: 1 } });
    socket.send("!setState null");
    await socket.next();
    expect(typeof (await stored())).toBe("string");
    await socket.close();
  });

  it("reads, after a wake, the object form every attachment had before (no user state)", async () => {
    const name = fresh("old-form");
    const stub = env.WS_ROOM.get(env.WS_ROOM.idFromName(name));
    const socket = await joinRoom(name, { _pk: "old", room: "blue" });
    const flags = { id: "old", tags: ["old", "room:blue"], uri: `${url("ws-room", name)}?_pk=old&room=blue`, readonly: true, protocol: true };
    await runInDurableObject(stub, (_instance, ctx) => (ctx.getWebSockets()[0] as WebSocket).serializeAttachment({ __dokit: flags, user: null }));
    await hibernate(stub);
    // The flags it carries (readonly, set above) decide; the socket is still the connection "old".
    socket.send({ type: "cf_agent_state", state: { count: 3 } });
    expect(await socket.nextJSON()).toEqual({ type: "cf_agent_state_error", error: "Connection is readonly" });
    expect(await stub.ids("room:blue")).toEqual(["old"]);
    socket.send("!readState");
    expect(await socket.nextJSON()).toEqual({ type: "reply", command: "readState", value: null });
    await socket.close();
  });

  it("shows only user state when state is read first after a wake, and keeps tags and ids", async () => {
    const name = fresh("wake-read");
    const stub = env.WS_ROOM.get(env.WS_ROOM.idFromName(name));
    const socket = await joinRoom(name, { _pk: "reader", room: "green" });
    socket.send(`!setState ${JSON.stringify({ n: 1 })}`);
    await socket.next();
    await hibernate(stub);
    socket.send("!readState");
    expect(await socket.nextJSON()).toEqual({ type: "reply", command: "readState", value: { n: 1 } });
    expect(await stub.ids("room:green")).toEqual(["reader"]);
    const attachment = await runInDurableObject(stub, (_instance, ctx) => connectionAttachment(ctx.getWebSockets()[0]!));
    expect(attachment).toEqual({
      __dokit: {
        id: "reader",
        pub: publicIdOf("reader"),
        tags: ["reader", "room:green"],
        uri: `${url("ws-room", name)}?_pk=reader&room=green`,
        readonly: false,
        protocol: true,
      },
      user: { n: 1 },
    });
    await socket.close();
  });

  it("refuses state over the attachment budget with a clear error and keeps the previous state", async () => {
    const socket = await joinRoom(fresh("budget"));
    socket.send(`!setState ${JSON.stringify({ small: true })}`);
    await socket.next();
    socket.send("!bigState 20000");
    const reply = await socket.nextJSON<{ value: { code: string; message: string } }>();
    expect(reply.value.code).toBe("ATTACHMENT_TOO_LARGE");
    expect(reply.value.message).toMatch(/^dokit: connection state does not fit the WebSocket attachment \(16384 bytes/);
    socket.send("!readState");
    expect(await socket.nextJSON()).toMatchObject({ value: { small: true } });
    socket.send("!bigState 15000");
    expect(await socket.nextJSON()).toMatchObject({ value: "stored" });
    await socket.close();
  });

  it("refuses state structured clone cannot carry with INVALID_STATE, keeping the previous state", async () => {
    const socket = await joinRoom(fresh("unclonable"));
    socket.send(`!setState ${JSON.stringify({ small: true })}`);
    await socket.next();
    socket.send("!fnState x");
    const reply = await socket.nextJSON<{ value: { code: string; message: string } }>();
    expect(reply.value).toEqual({
      code: "INVALID_STATE",
      message: "dokit: connection state cannot be cloned. The previous state is kept. (() => arg could not be cloned.)",
    });
    socket.send("!readState");
    expect(await socket.nextJSON()).toMatchObject({ value: { small: true } });
    await socket.close();
  });

  it("wakes for a message after eviction and answers from the fresh instance", async () => {
    const name = fresh("wake");
    const stub = env.WS_ROOM.get(env.WS_ROOM.idFromName(name));
    const socket = await joinRoom(name);
    await hibernate(stub);
    socket.send("after");
    expect(await socket.next()).toBe("echo:after");
    await socket.close();
  });
});

describe("hostile input", () => {
  it("survives malformed JSON, binary, unknown types, bad rpc frames and 1 MiB text without touching others", async () => {
    const name = fresh("hostile");
    const attacker = await joinRoom(name);
    const bystander = await joinRoom(name);
    const hostile: (string | ArrayBuffer)[] = [
      "{not json",
      "{}",
      "[]",
      "null",
      '{"type":42}',
      '{"type":"nope"}',
      '{"type":"rpc","id":"1","method":"__proto__","args":[]}',
      '{"type":"rpc","id":"2","method":"constructor","args":[]}',
      '{"type":"rpc","id":"3","method":"x","args":"not-an-array"}',
      '{"type":"rpc","id":4,"method":"x","args":[]}',
      '{"type":"cf_agent_state"}',
      '{"type":"__proto__","state":1}',
      new Uint8Array([1, 2, 3]).buffer,
      "x".repeat(1024 * 1024),
    ];
    for (const message of hostile) attacker.send(message);
    // Every hostile message gets exactly one answer (an echo, or an rpc error).
    const replies: string[] = [];
    for (let i = 0; i < hostile.length; i++) replies.push(String(await attacker.next()));
    expect(await attacker.drain()).toEqual([]);
    expect(replies).toContain("echo:{not json");
    expect(replies).toContain(JSON.stringify({ type: "rpc", id: "1", success: false, error: "Method __proto__ does not exist" }));
    expect(replies).toContain(JSON.stringify({ type: "rpc", id: "2", success: false, error: "Method constructor does not exist" }));
    expect(replies).toContain('echo:{"type":"rpc","id":"3","method":"x","args":"not-an-array"}');
    expect(replies).toContain('echo:{"type":"cf_agent_state"}');
    expect(replies).toContain("binary:3");
    expect(replies).toContain(`echo:${1024 * 1024} chars`);
    expect(replies.join("\n")).not.toMatch(/at .*\.ts:\d+/);
    bystander.send("still here");
    expect(await bystander.next()).toBe("echo:still here");
    expect(await bystander.drain()).toEqual([]);
    const stub = env.WS_ROOM.get(env.WS_ROOM.idFromName(name));
    expect((await stub.ids()).length).toBe(2);
    await Promise.all([attacker.close(), bystander.close()]);
  });

  it("answers every well-formed rpc request even without callables", async () => {
    const socket = await joinRoom(fresh("norpc"));
    expect(await socket.stream("whatever", [1])).toEqual({ chunks: [], error: "Method whatever does not exist" });
    // A method of the Durable Object itself: the answer says where callables come from.
    expect(await socket.stream("webSocketMessage", [])).toEqual({
      chunks: [],
      error: "Method webSocketMessage does not exist: webSocketMessage is a method of the Durable Object; clients call the methods of new WebSockets({ callables })",
    });
    await socket.close();
  });
});

describe("mixing into an existing object", () => {
  it("leaves sockets the host accepted itself to the host", async () => {
    const name = fresh("mixed");
    const raw = await openSocket(worker, url("ws-mixed", name, "/raw"));
    const ours = await open("ws-mixed", name);
    await ours.next(); // identity
    raw.send("hi");
    expect(await raw.next()).toBe("raw:hi");
    ours.send("hi");
    expect(await ours.next()).toBe("dokit:hi");
    expect(await env.WS_MIXED.get(env.WS_MIXED.idFromName(name)).counts()).toEqual({ dokit: 1, count: 1, all: 2 });
    await hibernate(env.WS_MIXED.get(env.WS_MIXED.idFromName(name)));
    raw.send("again");
    expect(await raw.next()).toBe("raw:again");
    // A broadcast right after a wake (which reads each attachment, the host's string one too) reaches dokit's sockets only.
    await hibernate(env.WS_MIXED.get(env.WS_MIXED.idFromName(name)));
    ours.send("all");
    expect(await ours.next()).toBe("everyone");
    expect(await raw.drain()).toEqual([]);
    await Promise.all([raw.close(), ours.close()]);
  });
});
