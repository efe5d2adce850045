// One scenario list, run for every (server, client) pair: dokit's client and
// the official `agents/client` against every scenario server in worker.ts.
// Real sockets over loopback to a worker started by wrangler (global-setup.ts).
import { AgentClient as OfficialClient } from "agents/client";
import { afterEach, describe, expect, inject, it, onTestFinished, vi } from "vitest";
import { AgentClient, DEFAULT_CALL_TIMEOUT_MS } from "../src/client";
import type { AgentClientOptions, AgentStub, CallOptions } from "../src/client";
import type { ScenarioCallables } from "./worker.callables";
import { eventually, fresh } from "./helpers";

/** Scenario servers: the binding each one is reached by, its kebab name, and whether it serves Cap'n Web yet. */
const servers = [
  { server: "reference", agent: "RefAgent", kebab: "ref-agent", capnweb: true },
  { server: "dokit", agent: "DokitAgent", kebab: "dokit-agent", capnweb: true },
] as const;
const clients = ["dokit", "official"] as const;
type ClientKind = (typeof clients)[number];

/** What the scenarios use of either client. */
interface Client {
  readonly id: string;
  readonly name: string;
  readonly ready: Promise<void>;
  readonly state: unknown;
  readonly identified: boolean;
  readonly connectionError: Error | null;
  readonly stub: AgentStub<ScenarioCallables>;
  readonly readyState: number;
  readonly CONNECTING: number;
  readonly OPEN: number;
  readonly CLOSING: number;
  readonly CLOSED: number;
  readonly url: string;
  readonly bufferedAmount: number;
  binaryType: "blob" | "arraybuffer";
  onopen: ((event: Event) => void) | null;
  onmessage: ((event: MessageEvent) => void) | null;
  onclose: ((event: Event & { code: number }) => void) | null;
  onerror: ((event: Event) => void) | null;
  setState(state: unknown): void;
  call(method: string, args?: unknown[], options?: CallOptions): Promise<unknown>;
  send(data: string | ArrayBuffer | Blob | ArrayBufferView<ArrayBuffer>): boolean;
  close(code?: number, reason?: string): void;
  reconnect(code?: number, reason?: string): void;
  updateProperties(properties: { room?: string; query?: Record<string, string> }): void;
  addEventListener(type: string, listener: (event: Event & { data?: unknown; code?: number }) => void): void;
}

/** The static ready-state constants both client classes carry. */
type ClientClass = { CONNECTING: number; OPEN: number; CLOSING: number; CLOSED: number };

interface Log {
  states: Array<[unknown, string]>;
  stateErrors: string[];
  identities: Array<[string, string]>;
  frames: Array<Record<string, unknown>>;
  connectionErrors: Array<Error & { code?: number }>;
}

const host = new URL(inject("workerUrl")).host;
const opened: Client[] = [];

afterEach(() => {
  for (const client of opened.splice(0)) client.close();
});

/** @returns the binary frames `client` receives, as they arrive */
function binaryFrames(client: Client): unknown[] {
  const frames: unknown[] = [];
  client.addEventListener("message", (event) => typeof event.data !== "string" && frames.push(event.data));
  return frames;
}

/** @returns the text frames `client` receives, as they arrive */
function textFrames(client: Client): string[] {
  const frames: string[] = [];
  client.addEventListener("message", (event) => typeof event.data === "string" && frames.push(event.data));
  return frames;
}

/** @returns the next event of `type` on `client` */
function nextEvent(client: Client, type: string): Promise<Event & { code?: number }> {
  return new Promise((resolve) => {
    const listener = (event: Event) => {
      (client as unknown as EventTarget).removeEventListener(type, listener);
      resolve(event);
    };
    client.addEventListener(type, listener);
  });
}

describe.each(servers)("$server server", ({ server, agent, kebab, capnweb }) => {
  describe.each(clients)("%s client", (kind: ClientKind) => {
    const name = (label: string) => fresh(`${server}-${kind}-${label}`);

    function connect(options: Partial<AgentClientOptions> = {}): { client: Client; log: Log } {
      const log: Log = { states: [], stateErrors: [], identities: [], frames: [], connectionErrors: [] };
      const all: AgentClientOptions = {
        host,
        agent,
        name: name("x"),
        minReconnectionDelay: 50,
        maxReconnectionDelay: 200,
        onStateUpdate: (state, source) => log.states.push([state, source]),
        onStateUpdateError: (error) => log.stateErrors.push(error),
        onIdentity: (n, a) => log.identities.push([n, a]),
        onConnectionError: (error) => log.connectionErrors.push(error),
        ...options,
      };
      // SAFETY: both clients accept these options; the official one reads the reconnect options through PartySocket.
      const client = (kind === "dokit" ? new AgentClient(all) : new OfficialClient(all as never)) as unknown as Client;
      client.addEventListener("message", (event) => {
        if (typeof event.data !== "string") return;
        try {
          log.frames.push(JSON.parse(event.data));
        } catch {
          // not JSON
        }
      });
      opened.push(client);
      return { client, log };
    }

    it("builds the URL: path, _pk, query object and async query", async () => {
      const objectName = name("url");
      const { client, log } = connect({ name: objectName, path: "sub/path", query: { token: "abc", skip: undefined } });
      await eventually(() => expect(log.frames.some((f) => f.type === "welcome")).toBe(true));
      const welcome = log.frames.find((f) => f.type === "welcome")!;
      const uri = new URL(String(welcome.uri));
      expect(uri.pathname).toBe(`/agents/${kebab}/${objectName}/sub/path`);
      expect(uri.searchParams.get("_pk")).toBe(client.id);
      expect(welcome.id).toBe(client.id);
      expect(uri.searchParams.get("token")).toBe("abc");
      expect(uri.searchParams.has("skip")).toBe(false);

      const second = connect({ query: async () => ({ token: "from-async" }), id: "fixed-id" });
      await eventually(() => expect(second.log.frames.some((f) => f.type === "welcome")).toBe(true));
      const uri2 = new URL(String(second.log.frames.find((f) => f.type === "welcome")!.uri));
      expect(uri2.searchParams.get("token")).toBe("from-async");
      expect(uri2.searchParams.get("_pk")).toBe("fixed-id");
      expect(second.client.id).toBe("fixed-id");
    });

    it("resolves ready after identity and the state that follows it", async () => {
      const objectName = name("ready");
      const { client, log } = connect({ name: objectName });
      expect(client.identified).toBe(false);
      await client.ready;
      expect(client.identified).toBe(true);
      expect(client.state).toEqual({ count: 0 });
      expect(log.identities).toEqual([[objectName, kebab]]);
      expect(log.states).toEqual([[{ count: 0 }, "server"]]);
      await eventually(() => expect(log.frames.map((f) => f.type)).toContain("welcome"));
      expect(log.frames.map((f) => f.type)).toEqual(["cf_agent_identity", "cf_agent_state", "welcome"]);
      expect(log.frames[0]).toMatchObject({ name: objectName, agent: kebab, stateFollows: true });
    });

    it("syncs state both ways", async () => {
      const objectName = name("state");
      const a = connect({ name: objectName });
      const b = connect({ name: objectName });
      await Promise.all([a.client.ready, b.client.ready]);
      a.client.setState({ count: 5 });
      expect(a.client.state).toEqual({ count: 5 });
      expect(a.log.states.at(-1)).toEqual([{ count: 5 }, "client"]);
      await eventually(() => expect(b.client.state).toEqual({ count: 5 }));
      expect(b.log.states.at(-1)).toEqual([{ count: 5 }, "server"]);

      await a.client.call("setServerState", [{ count: 7 }]);
      await eventually(() => expect(a.client.state).toEqual({ count: 7 }));
      await eventually(() => expect(b.client.state).toEqual({ count: 7 }));
      expect(a.log.stateErrors).toEqual([]);
    });

    it("refuses state from a readonly connection; the client ends on the stored value where the server sends it", async () => {
      const objectName = name("readonly");
      const { client, log } = connect({ name: objectName, query: { mode: "view" } });
      await client.ready;
      client.setState({ count: 99 });
      expect(client.state).toEqual({ count: 99 });
      await eventually(() => expect(log.stateErrors).toEqual(["Connection is readonly"]));
      if (kind === "dokit" || server === "dokit") {
        // dokit's client rolls back; a dokit server also follows the refusal with the stored value.
        await eventually(() => expect(client.state).toEqual({ count: 0 }));
        expect(log.states.at(-1)).toEqual([{ count: 0 }, "server"]);
      } else {
        // The official client keeps the refused value when the server sends nothing after the error.
        expect(client.state).toEqual({ count: 99 });
      }
      // Readonly connections still call methods.
      expect(await client.call("add", [1, 1])).toBe(2);
    });

    it("refuses a state the validator rejects", async () => {
      const { client, log } = connect({ name: name("invalid") });
      await client.ready;
      client.setState({ count: -1 });
      await eventually(() => expect(log.stateErrors).toEqual(["State update rejected"]));
      await eventually(() => expect(client.state).toEqual(kind === "dokit" || server === "dokit" ? { count: 0 } : { count: -1 }));
    });

    it("holds the stored value after a refusal that follows an accepted change", async ({ skip }) => {
      // The reference server sends nothing after a refusal: a sender rolls back past its own stored change there.
      if (server !== "dokit") skip();
      const objectName = name("refused-after-accepted");
      const { client, log } = connect({ name: objectName });
      const other = connect({ name: objectName });
      await Promise.all([client.ready, other.client.ready]);
      client.setState({ count: 5 });
      await eventually(() => expect(other.client.state).toEqual({ count: 5 })); // stored and synced
      client.setState({ count: -1 });
      await eventually(() => expect(log.stateErrors).toEqual(["State update rejected"]));
      await eventually(() => expect(log.states.at(-1)).toEqual([{ count: 5 }, "server"]));
      expect(client.state).toEqual({ count: 5 });
      expect(other.client.state).toEqual({ count: 5 });
      expect(other.log.stateErrors).toEqual([]);
    });

    it("says where callables live when a client calls a method of the Durable Object itself", async ({ skip }) => {
      if (server !== "dokit") skip(); // the reference answers `Method <name> does not exist` alone
      const { client } = connect({ name: name("host-method") });
      await expect(client.call("fetch", [])).rejects.toThrow(
        "Method fetch does not exist: fetch is a method of the Durable Object; clients call the methods of new WebSockets({ callables })",
      );
      // A name nothing defines keeps the protocol's text exactly.
      await expect(client.call("noSuchMethod", [])).rejects.toThrow(/^Method noSuchMethod does not exist$/);
    });

    it("calls methods with call() and the stub", async () => {
      const { client } = connect({ name: name("call") });
      expect(await client.call("add", [2, 3])).toBe(5);
      expect(await client.stub.add(4, 5)).toBe(9);
      expect(await client.stub.echo({ nested: [1, "two", null] })).toEqual({ nested: [1, "two", null] });
      await expect(client.call("fail", ["boom"])).rejects.toThrow("boom");
      await expect(client.stub.fail("stub boom")).rejects.toThrow("stub boom");
      await expect(client.call("nope", [])).rejects.toThrow("Method nope does not exist");
      await expect(client.call("counter", [])).rejects.toThrow(
        "Method counter returns an RpcTarget, which only the capnweb transport can carry",
      );
    });

    it("sends nothing when the stub is awaited, logged or serialized", async () => {
      const { client, log } = connect({ name: name("stub") });
      await client.ready;
      const stub = client.stub as unknown as Record<string | symbol, unknown>;
      for (const key of ["then", "toJSON", "constructor", "valueOf", "toString", Symbol.iterator, Symbol.toPrimitive]) {
        expect(stub[key]).toBeUndefined();
      }
      expect(await client.stub).toBe(client.stub);
      expect(JSON.stringify(client.stub)).toBe("{}");
      // Anything sent would be answered with an error frame before this call's reply.
      expect(await client.call("add", [1, 2])).toBe(3);
      expect(log.frames.filter((f) => f.type === "rpc" && f.success === false)).toEqual([]);
    });

    it("times out calls: default, per call, and 0 for none", async () => {
      if (kind === "dokit") expect(DEFAULT_CALL_TIMEOUT_MS).toBe(30_000);
      const { client } = connect({ name: name("timeout"), defaultCallTimeout: 150 });
      await client.ready;
      await expect(client.call("slow", [1000])).rejects.toThrow("RPC call to slow timed out after 150ms");
      await expect(client.stub.slow(1000)).rejects.toThrow("RPC call to slow timed out after 150ms");
      await expect(client.call("slow", [1000], { timeout: 60 })).rejects.toThrow(
        "RPC call to slow timed out after 60ms",
      );
      expect(await client.call("slow", [400, "done"], { timeout: 0 })).toBe("done");
      expect(await client.call("slow", [20, "fast"], { timeout: 500 })).toBe("fast");
    });

    it("streams chunks, then done; or chunks, then the error", async () => {
      const { client } = connect({ name: name("stream"), defaultCallTimeout: 100 });
      const chunks: unknown[] = [];
      let done = 0;
      const result = await client.call("countdown", [3], {
        stream: { onChunk: (chunk) => chunks.push(chunk), onDone: () => done++, onError: () => (done = -100) },
      });
      expect(result).toBeUndefined();
      expect(chunks).toEqual([3, 2, 1, 0]);
      expect(done).toBe(1);

      // Streaming calls have no default timeout: 3 chunks × 80 ms outlast the 100 ms default.
      const ticks: unknown[] = [];
      await client.call("tick", [3, 80], { stream: { onChunk: (chunk) => ticks.push(chunk) } });
      expect(ticks).toEqual([1, 2, 3]);

      const broken: unknown[] = [];
      const errors: string[] = [];
      await expect(
        client.call("brokenStream", [], {
          stream: { onChunk: (chunk) => broken.push(chunk), onError: (error) => errors.push(error) },
        }),
      ).rejects.toThrow("stream broke");
      expect(broken).toEqual(["chunk 1", "chunk 2"]);
      expect(errors).toEqual(["stream broke"]);
    });

    it("rejects calls in flight on a closed socket and sends queued calls after reconnecting", async () => {
      const { client } = connect({ name: name("reconnect") });
      await client.ready;
      const closed = nextEvent(client, "close");
      const dropped = client.call("drop", [client.id, 1000, "bye"]);
      await expect(dropped).rejects.toThrow("Connection closed");
      expect((await closed).code).toBe(1000);
      expect(client.identified).toBe(false);
      // Made while reconnecting: queued, sent once the next socket opens.
      const queued = client.call("add", [20, 22]);
      const viaStub = client.stub.echo("again");
      expect(await queued).toBe(42);
      expect(await viaStub).toBe("again");
      await client.ready;
      expect(client.identified).toBe(true);
      expect(client.state).toEqual({ count: 0 });
    });

    it.runIf(kind === "dokit")("holds a state set while reconnecting until the new socket is identified", async () => {
      const objectName = name("offline-state");
      const { client } = connect({ name: objectName });
      await client.ready;
      const closed = nextEvent(client, "close");
      await client.call("drop", [client.id, 1000]).catch(() => {});
      await closed;
      client.setState({ count: 11 });
      expect(client.state).toEqual({ count: 11 });
      await eventually(() => expect(client.identified).toBe(true));
      // The connect sequence's state frame came first; the held value was re-applied and sent after it.
      expect(client.state).toEqual({ count: 11 });
      const other = connect({ name: objectName });
      await other.client.ready;
      expect(other.client.state).toEqual({ count: 11 });
    });

    it("ends on a 4000-4999 close: pending and later calls reject at once", async () => {
      const { client, log } = connect({ name: name("final") });
      await client.ready;
      const pending = client.call("slow", [2000]);
      const dropped = client.call("drop", [client.id, 4001, "kicked"]);
      await expect(dropped).rejects.toThrow("Connection closed");
      await expect(pending).rejects.toThrow("Connection closed");
      await eventually(() => expect(log.connectionErrors).toHaveLength(1));
      expect(log.connectionErrors[0]!.code).toBe(4001);
      expect(client.connectionError).toBe(log.connectionErrors[0]);
      const started = Date.now();
      await expect(client.call("add", [1, 1])).rejects.toThrow("Connection closed");
      expect(Date.now() - started).toBeLessThan(50);
      // No reconnect happens.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(client.identified).toBe(false);
    });

    it("close() rejects pending calls", async () => {
      const { client, log } = connect({ name: name("close") });
      await client.ready;
      const pending = client.call("slow", [2000]);
      await new Promise((resolve) => setTimeout(resolve, 20));
      client.close();
      await expect(pending).rejects.toThrow("Connection closed");
      if (kind === "dokit") {
        // dokit: later calls reject at once.
        await expect(client.call("add", [1, 1])).rejects.toThrow("Connection closed");
      } else {
        // The official client buffers calls made after close(); they only end by timeout,
        // and its socket warns that the send was buffered.
        const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
        onTestFinished(() => warn.mockRestore());
        await expect(client.call("add", [1, 1], { timeout: 100 })).rejects.toThrow("timed out after 100ms");
        expect(String(warn.mock.calls[0]?.[0])).toMatch(/send\(\) was called after close\(\)/);
      }
      expect(log.connectionErrors).toEqual([]);
    });

    describe("WebSocket surface (drop-in for the official client)", () => {
      it("reports readyState CONNECTING, OPEN, CLOSED while reconnecting, OPEN, CLOSED after close()", async () => {
        const Class: ClientClass = kind === "dokit" ? AgentClient : OfficialClient;
        expect([Class.CONNECTING, Class.OPEN, Class.CLOSING, Class.CLOSED]).toEqual([0, 1, 2, 3]);
        const { client } = connect({ name: name("ready-state") });
        expect([client.CONNECTING, client.OPEN, client.CLOSING, client.CLOSED]).toEqual([0, 1, 2, 3]);
        expect(client.readyState).toBe(client.CONNECTING);
        await nextEvent(client, "open");
        expect(client.readyState).toBe(client.OPEN);
        const closed = nextEvent(client, "close");
        await client.call("drop", [client.id, 1000]).catch(() => {});
        await closed;
        // Waiting out the backoff (at least 25 ms here) before the next attempt.
        expect(client.readyState).toBe(client.CLOSED);
        await client.ready;
        expect(client.readyState).toBe(client.OPEN);
        client.close();
        expect(client.readyState).toBe(client.CLOSED);
      });

      it("is CLOSED with startClosed, with an empty url until the first attempt", async () => {
        const objectName = name("url");
        const { client } = connect({ name: objectName, startClosed: true, query: { token: "t" } });
        expect(client.readyState).toBe(client.CLOSED);
        expect(client.url).toBe("");
        client.reconnect();
        await nextEvent(client, "open");
        expect(client.readyState).toBe(client.OPEN);
        const url = new URL(client.url);
        expect(url.protocol).toBe("ws:");
        expect(url.host).toBe(host);
        expect(url.pathname).toBe(`/agents/${kebab}/${objectName}`);
        expect(url.searchParams.get("_pk")).toBe(client.id);
        expect(url.searchParams.get("token")).toBe("t");
      });

      it("runs onopen, onmessage and onclose before listeners; close() dispatches close at once", async () => {
        const { client } = connect({ name: name("handlers") });
        const seen: string[] = [];
        client.onopen = () => seen.push("onopen");
        client.addEventListener("open", () => seen.push("open listener"));
        client.onmessage = (event) => {
          if (typeof event.data === "string") seen.push(`onmessage ${JSON.parse(event.data).type}`);
        };
        client.onclose = (event) => seen.push(`onclose ${event.code}`);
        client.addEventListener("close", (event) => seen.push(`close listener ${event.code}`));
        await eventually(() => expect(seen).toContain("onmessage welcome"));
        expect(seen).toEqual([
          "onopen",
          "open listener",
          "onmessage cf_agent_identity",
          "onmessage cf_agent_state",
          "onmessage welcome",
        ]);
        client.close(1000, "done");
        expect(seen.slice(-2)).toEqual(["onclose 1000", "close listener 1000"]);
      });

      it("runs onerror when a socket fails", async () => {
        const { client } = connect({ name: name("onerror"), host: "127.0.0.1:9", maxRetries: 0 });
        let errors = 0;
        client.onerror = () => errors++;
        await eventually(() => expect(errors).toBeGreaterThan(0));
        expect(client.readyState).toBe(client.CLOSED);
      });

      it("queues send() while not open (bufferedAmount counts it) and returns whether it went out", async () => {
        const { client } = connect({ name: name("send"), startClosed: true });
        const texts = textFrames(client);
        expect(client.bufferedAmount).toBe(0);
        expect(client.send("echo:queued")).toBe(false);
        expect(client.bufferedAmount).toBe("echo:queued".length);
        client.reconnect();
        await eventually(() => expect(texts).toContain("echo:queued"));
        expect(client.bufferedAmount).toBe(0);
        expect(client.send("echo:direct")).toBe(true);
        await eventually(() => expect(texts).toContain("echo:direct"));
      });

      it("delivers binary frames as Blob by default and as ArrayBuffer with binaryType arraybuffer", async () => {
        const { client } = connect({ name: name("binary") });
        const frames = binaryFrames(client);
        expect(client.binaryType).toBe("blob");
        await client.ready;
        expect(client.send(new Uint8Array([1, 2, 3]))).toBe(true);
        await eventually(() => expect(frames).toHaveLength(1));
        expect(frames[0]).toBeInstanceOf(Blob);
        expect([...new Uint8Array(await (frames[0] as Blob).arrayBuffer())]).toEqual([1, 2, 3]);

        client.binaryType = "arraybuffer";
        expect(client.binaryType).toBe("arraybuffer");
        client.send(new Uint8Array([4, 5]).buffer);
        client.send(new Blob([new Uint8Array([6])]));
        client.send("echo:after the blob");
        const texts = textFrames(client);
        await eventually(() => expect(frames).toHaveLength(3));
        expect(frames.slice(1).map((frame) => [...new Uint8Array(frame as ArrayBuffer)])).toEqual([[4, 5], [6]]);
        expect(frames[1]).toBeInstanceOf(ArrayBuffer);
        await eventually(() => expect(texts).toEqual(["echo:after the blob"]));
      });

      it("reconnect() closes the open socket at once and connects again with the same id", async () => {
        const { client, log } = connect({ name: name("reconnect-now") });
        await client.ready;
        const codes: number[] = [];
        client.addEventListener("close", (event) => codes.push(event.code!));
        client.reconnect();
        expect(codes).toEqual([1000]);
        expect(client.identified).toBe(false);
        expect(client.readyState).not.toBe(client.OPEN);
        await client.ready;
        expect(client.readyState).toBe(client.OPEN);
        expect(log.identities).toHaveLength(2);
        expect(new URL(client.url).searchParams.get("_pk")).toBe(client.id);
      });

      it("updateProperties() changes the name and query for the next connection", async () => {
        // The official client warns when the identity changes on reconnect: expected here.
        const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
        onTestFinished(() => {
          const warned = warn.mock.calls.map((args) => String(args[0]));
          warn.mockRestore();
          if (kind === "official") expect(warned.join("\n")).toMatch(/Identity changed on reconnect/);
        });
        const first = name("props-a");
        const second = name("props-b");
        const { client, log } = connect({ name: first, query: { token: "one" } });
        await client.ready;
        const id = client.id;
        client.updateProperties({ room: second, query: { token: "two" } });
        // The open socket is kept.
        expect(client.readyState).toBe(client.OPEN);
        expect(new URL(client.url).pathname).toBe(`/agents/${kebab}/${first}`);
        client.reconnect();
        await eventually(() => expect(log.identities.at(-1)).toEqual([second, kebab]));
        expect(client.name).toBe(second);
        const url = new URL(client.url);
        expect(url.pathname).toBe(`/agents/${kebab}/${second}`);
        expect(url.searchParams.get("token")).toBe("two");
        expect(url.searchParams.get("_pk")).toBe(client.id);
        // dokit keeps the id; PartySocket draws a new one when the constructor was given none.
        if (kind === "dokit") expect(client.id).toBe(id);
        else expect(client.id).not.toBe(id);
      });
    });

    describe.runIf(capnweb)("capnweb transport", () => {
      it("connects, syncs state and calls methods", async () => {
        const objectName = name("capnweb");
        const { client, log } = connect({ name: objectName, transport: "capnweb" });
        await client.ready;
        expect(client.readyState).toBe(client.OPEN);
        expect(new URL(client.url).searchParams.get("__agents_transport")).toBe("capnweb");
        expect(client.state).toEqual({ count: 0 });
        expect(log.identities).toEqual([[objectName, kebab]]);
        await eventually(() => expect(log.frames.some((f) => f.type === "welcome")).toBe(true));
        const uri = new URL(String(log.frames.find((f) => f.type === "welcome")!.uri));
        expect(uri.searchParams.get("__agents_transport")).toBe("capnweb");
        expect(uri.searchParams.get("_pk")).toBe(client.id);

        expect(await client.call("add", [2, 3])).toBe(5);
        expect(await client.stub.echo({ a: 1 })).toEqual({ a: 1 });
        await expect(client.stub.fail("native boom")).rejects.toThrow("native boom");

        const other = connect({ name: objectName });
        await other.client.ready;
        client.setState({ count: 3 });
        await eventually(() => expect(other.client.state).toEqual({ count: 3 }));
        other.client.setState({ count: 4 });
        await eventually(() => expect(client.state).toEqual({ count: 4 }));
      });

      it("delivers binary frames by binaryType (the official client passes the session's bytes through)", async () => {
        const { client } = connect({ name: name("capnweb-binary"), transport: "capnweb" });
        const frames = binaryFrames(client);
        await client.ready;
        expect(client.send(new Uint8Array([7, 8]))).toBe(true);
        await eventually(() => expect(frames).toHaveLength(1));
        if (kind === "dokit") expect(frames[0]).toBeInstanceOf(Blob);
        else expect(frames[0]).toBeInstanceOf(Uint8Array);
        const bytes = frames[0] instanceof Blob ? await frames[0].arrayBuffer() : (frames[0] as ArrayBuffer);
        expect([...new Uint8Array(bytes)]).toEqual([7, 8]);
      });

      it("returns live stubs for RpcTarget results", async () => {
        const { client } = connect({ name: name("capnweb-stub"), transport: "capnweb" });
        const counter = (await client.stub.counter()) as unknown as { increment(): Promise<number> } & Disposable;
        expect(await counter.increment()).toBe(1);
        expect(await counter.increment()).toBe(2);
        counter[Symbol.dispose]();
      });

      it("streams natively and times out", async () => {
        const { client } = connect({ name: name("capnweb-stream"), transport: "capnweb", defaultCallTimeout: 150 });
        const chunks: unknown[] = [];
        let done = 0;
        await client.call("countdown", [2], { stream: { onChunk: (c) => chunks.push(c), onDone: () => done++ } });
        expect(chunks).toEqual([2, 1, 0]);
        expect(done).toBe(1);
        await expect(client.call("slow", [1000])).rejects.toThrow("RPC call to slow timed out after 150ms");
      });

      it("queues calls across a reconnect", async () => {
        const { client } = connect({ name: name("capnweb-reconnect"), transport: "capnweb" });
        await client.ready;
        const closed = nextEvent(client, "close");
        await client.call("drop", [client.id, 1000, "bye"]).catch(() => {});
        await closed;
        expect(await client.call("add", [1, 2])).toBe(3);
        await client.ready;
        expect(client.identified).toBe(true);
      });
    });
  });
});
