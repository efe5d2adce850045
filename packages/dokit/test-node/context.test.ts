// getCurrentAgent()'s context exists only in a Worker that can read it (docs/lifecycle.md).
// Two Workers built by wrangler, over loopback sockets: one that never imports
// getCurrentAgent() (its bundle leaves the context out, so it starts without
// node:async_hooks), and one that first reaches it through a dynamic import.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLoopbackWorker } from "./loopback-worker";

let plain: { url: string; stop: () => Promise<void> };
let late: { url: string; stop: () => Promise<void> };

beforeAll(async () => {
  [plain, late] = await Promise.all([
    startLoopbackWorker(new URL("./context/wrangler.jsonc", import.meta.url)),
    startLoopbackWorker(new URL("./context/wrangler.late.jsonc", import.meta.url)),
  ]);
});
afterAll(async () => {
  await Promise.all([plain?.stop(), late?.stop()]);
});

let serial = 0;

/** A WebSocket to `/agents/<kebab>/<room>` (a fresh room by default) that keeps its frames; `next(match)` waits for one. */
async function socket(base: string, kebab: string, name?: string) {
  const n = ++serial;
  const room = name ?? `room-${n}-${Date.now()}`;
  const url = new URL(`/agents/${kebab}/${room}?_pk=client-${n}`, base);
  url.protocol = "ws:";
  const ws = new WebSocket(url.href);
  const frames: string[] = [];
  const waiting = new Set<() => void>();
  ws.addEventListener("message", (event) => {
    frames.push(String(event.data));
    for (const wake of waiting) wake();
  });
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => resolve(), { once: true });
    ws.addEventListener("error", () => reject(new Error(`connect failed: ${url.href}`)), { once: true });
  });
  /** Resolves with the first frame from `from` on that `match`es, or rejects after 5 s. */
  const next = (match: (frame: string) => boolean, from = 0): Promise<string> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = frames.slice(from).find(match);
        if (found === undefined) return;
        waiting.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        waiting.delete(check);
        reject(new Error(`no matching frame; got ${JSON.stringify(frames)}`));
      }, 5_000);
      waiting.add(check);
      check();
    });
  /** Sends `message` and waits for the first later frame that matches. */
  const ask = (message: string, match: (frame: string) => boolean) => {
    const from = frames.length;
    ws.send(message);
    return next(match, from);
  };
  return { ws, frames, next, ask, id: `client-${n}`, room };
}

const rpc = (id: string, method: string, args: unknown[]) => JSON.stringify({ type: "rpc", id, method, args });
const rpcAnswer = (id: string) => (frame: string) => frame.includes(`"id":"${id}"`) && frame.includes('"type":"rpc"');

describe("a Worker that never imports getCurrentAgent()", () => {
  it("serves connect frames, handlers and callables as usual", async () => {
    const client = await socket(plain.url, "plain");
    try {
      expect(await client.next((f) => f.startsWith("hello "))).toBe(`hello ${client.id}`);
      expect(client.frames.some((f) => f.includes('"cf_agent_identity"'))).toBe(true);
      expect(await client.ask("ping", (f) => f.startsWith("echo "))).toBe("echo ping");
      expect(await client.ask("async", (f) => f === "after await")).toBe("after await");
      expect(JSON.parse(await client.ask(rpc("1", "echo", [{ n: 1 }]), rpcAnswer("1")))).toMatchObject({ success: true, result: { n: 1 } });
      expect(JSON.parse(await client.ask(rpc("2", "later", ["x"]), rpcAnswer("2")))).toMatchObject({ success: true, result: "later x" });
      const failed = JSON.parse(await client.ask(rpc("3", "fail", []), rpcAnswer("3")));
      expect(failed).toMatchObject({ success: false, error: "refused on purpose" });
    } finally {
      client.ws.close();
    }
  });

  it("stores a state frame and broadcasts it to the other connections", async () => {
    const sender = await socket(plain.url, "plain");
    const other = await socket(plain.url, "plain", sender.room);
    try {
      await other.next((f) => f.startsWith("hello "));
      const broadcast = other.next((f) => f.includes('"count":2'), other.frames.length);
      sender.ws.send(JSON.stringify({ type: "cf_agent_state", state: { count: 2 } }));
      expect(JSON.parse(await broadcast)).toEqual({ type: "cf_agent_state", state: { count: 2 } });
      const joining = await socket(plain.url, "plain", sender.room); // a new connection gets the stored state
      expect(JSON.parse(await joining.next((f) => f.includes('"cf_agent_state"')))).toEqual({ type: "cf_agent_state", state: { count: 2 } });
      joining.ws.close();
    } finally {
      sender.ws.close();
      other.ws.close();
    }
  });

  it("answers each kind of first message after an eviction", async () => {
    // A later object of the class waits to attach its capabilities (docs/lifecycle.md, "Wiring on
    // demand"); with no context to enter, a message goes to onMessage without the context module.
    const first = await socket(plain.url, "plain");
    await first.next((f) => f.startsWith("hello "));
    first.ws.close();
    const a = await socket(plain.url, "plain");
    const b = await socket(plain.url, "plain", a.room);
    const evict = async () => {
      const response = await fetch(new URL(`/evict/${a.room}`, plain.url), { method: "POST" });
      expect(await response.text()).toBe("evicted");
    };
    try {
      await b.next((f) => f.startsWith("hello "));
      await evict();
      expect(await a.ask("ping", (f) => f.startsWith("echo "))).toBe("echo ping");
      await evict();
      expect(await a.ask("async", (f) => f === "after await")).toBe("after await");
      await evict();
      a.ws.send("throw"); // a handler that throws on a wake: logged, the connection and its neighbour keep working
      expect(await a.ask("after", (f) => f.startsWith("echo "))).toBe("echo after");
      await evict();
      expect(JSON.parse(await a.ask(rpc("w1", "echo", [7]), rpcAnswer("w1")))).toMatchObject({ success: true, result: 7 });
      await evict();
      const broadcast = b.next((f) => f.includes('"count":9'), b.frames.length);
      a.ws.send(JSON.stringify({ type: "cf_agent_state", state: { count: 9 } }));
      expect(JSON.parse(await broadcast)).toEqual({ type: "cf_agent_state", state: { count: 9 } });
      await evict();
      expect(await b.ask("neighbour", (f) => f.startsWith("echo "))).toBe("echo neighbour");
    } finally {
      a.ws.close();
      b.ws.close();
    }
  });

  it("keeps a connection whose handler threw, and its neighbours, working", async () => {
    const a = await socket(plain.url, "plain");
    const b = await socket(plain.url, "plain", a.room);
    try {
      a.ws.send("throw");
      expect(await a.ask("after", (f) => f.startsWith("echo "))).toBe("echo after");
      expect(await b.ask("neighbour", (f) => f.startsWith("echo "))).toBe("echo neighbour");
    } finally {
      a.ws.close();
      b.ws.close();
    }
  });
});

describe("a Worker that first reaches getCurrentAgent() through a dynamic import", () => {
  it("warns that work already running has no context, and gives every later event one", async () => {
    const client = await socket(late.url, "late");
    try {
      // This message's handler was entered before the import loaded the context.
      expect(await client.ask("first", (f) => f.startsWith("first:"))).toBe("first: none");
      const warnings: string[] = JSON.parse(await client.ask("warnings", (f) => f.startsWith("[")));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain("getCurrentAgent() was loaded after dokit had begun handling events");
      expect(await client.ask("second", (f) => f.startsWith("second:"))).toBe(`second: ${client.id}`);
      expect(await client.ask("third", (f) => f.startsWith("third:"))).toBe(`third: ${client.id}`);
    } finally {
      client.ws.close();
    }
  });
});
