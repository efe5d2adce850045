import { env, exports } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type CallableSource, type Capability, claimAlarm, DokitError, type EntryPoint, getCurrentAgent, Lifecycle } from "../../src/lifecycle";
import { DurableObject } from "cloudflare:workers";
import { kebab } from "../../src/protocol";
import { matchAgentPath, routeAgentRequest } from "../../src/routing";
import { WebSockets } from "../../src/websockets";
import { captureConsole } from "../logs";
import { fresh } from "../helpers";
import { refusedClose } from "../refused-upgrade";
import { RouteCapability } from "./objects";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: unknown }).default as { fetch(request: Request | string, init?: RequestInit): Promise<Response> };
const get = (path: string, init?: RequestInit) => worker.fetch(`http://example.com${path}`, init);
/** A callable source with no methods, for claiming method names. */
const noMethods: CallableSource = { methodNames: [], invoke: () => Promise.reject(new Error("no methods")) };

/** Builds a second instance of a test host on the real state of a running object. */
async function inObject<R>(fn: (ctx: DurableObjectState) => R | Promise<R>): Promise<R> {
  const stub = env.PLAIN.get(env.PLAIN.idFromName(fresh("scratch")));
  return runInDurableObject(stub, (_instance, ctx) => fn(ctx));
}

describe("Lifecycle.install", () => {
  it("installs entry points on a plain Durable Object and dispatches claimed routes", async () => {
    const name = fresh("plain");
    const response = await get(`/agents/plain/${name}/hello`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      path: "/hello",
      method: "GET",
      agentIsHost: true,
      props: null,
      name,
      className: "plain-host",
    });
  });

  it("lets a host with its own fetch delegate, and answers what dokit does not claim itself", async () => {
    const name = fresh("delegating");
    const claimed = await get(`/agents/delegating/${name}/dokit`);
    expect(((await claimed.json()) as { path: string }).path).toBe("/dokit");
    const own = await get(`/agents/delegating/${name}/elsewhere`);
    expect(await own.text()).toBe("the host's own answer");
  });

  it("lets a delegating host keep its own sockets", async () => {
    const response = await get(`/agents/delegating/${fresh("ws")}/socket`, { headers: { Upgrade: "websocket" } });
    // Nothing claims upgrades here, so lifecycle.fetch returns undefined and the host answers.
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("the host's own answer");
  });

  it("refuses to skip a host's entry point silently", async () => {
    const message = await inObject((ctx) => {
      class OwnFetch extends DurableObject {
        readonly lifecycle = Lifecycle.install(this);
        override async fetch() {
          return new Response("mine");
        }
      }
      try {
        new OwnFetch(ctx, env);
        return "no error";
      } catch (error) {
        return error instanceof DokitError ? `${error.code}: ${error.message}` : String(error);
      }
    });
    expect(message).toMatch(/^HANDLER_CONFLICT: dokit: OwnFetch defines its own fetch\(\)/);
    expect(message).toContain('delegates: ["fetch"]');
  });

  it("puts the entry points on the class once; each instance answers through its own lifecycle", async () => {
    const result = await inObject(async (ctx) => {
      class Host extends DurableObject {
        constructor(
          ctx: DurableObjectState,
          env: Env,
          readonly label: string,
        ) {
          super(ctx, env);
        }
        readonly lifecycle = Lifecycle.install(this);
        onRequest(): Response {
          return new Response(this.label);
        }
      }
      class Child extends Host {}
      const one = new Host(ctx, env, "one");
      const two = new Host(ctx, env, "two");
      const child = new Child(ctx, env, "child");
      const request = () => new Request("http://do/anything");
      // SAFETY: install put fetch on Host.prototype.
      const fetchOf = (host: Host) => (host as unknown as { fetch(request: Request): Promise<Response> }).fetch(request());
      return {
        own: ["fetch", "alarm", "webSocketMessage", "webSocketClose", "webSocketError"].filter((name) => Object.hasOwn(one, name)),
        shared: one.fetch === two.fetch && one.webSocketMessage === child.webSocketMessage,
        answers: [await (await fetchOf(one)).text(), await (await fetchOf(two)).text(), await (await fetchOf(child)).text()],
      };
    });
    expect(result).toEqual({ own: [], shared: true, answers: ["one", "two", "child"] });
  });

  it("checks a delegating class's entry points again when an instance names other delegates", async () => {
    const result = await inObject(async (ctx) => {
      class Mixed extends DurableObject {
        readonly lifecycle: Lifecycle;
        constructor(ctx: DurableObjectState, env: Env, delegates?: EntryPoint[]) {
          super(ctx, env);
          this.lifecycle = Lifecycle.install(this, { delegates });
        }
        override async fetch(request: Request): Promise<Response> {
          return (await this.lifecycle.fetch(request)) ?? new Response(`mine: ${this.lifecycle.className}`);
        }
      }
      const outcome = (delegates?: EntryPoint[]) => {
        try {
          return new Mixed(ctx, env, delegates);
        } catch (error) {
          return error instanceof DokitError ? error.code : String(error);
        }
      };
      const first = outcome(["fetch"]);
      const second = outcome(["fetch"]); // the class is known with these delegates
      const without = outcome(); // other delegates: checked again, not taken from the first instance
      const after = outcome(["fetch"]);
      const answer = async (host: Mixed | string) => (typeof host === "string" ? host : (await host.fetch(new Request("http://do/x"))).text());
      return [await answer(first), await answer(second), without, await answer(after)];
    });
    expect(result).toEqual(["mine: mixed", "mine: mixed", "HANDLER_CONFLICT", "mine: mixed"]);
  });

  it("refuses a second install on one object, and an instance of an installed class that did not install", async () => {
    const result = await inObject(async (ctx) => {
      class Twice extends DurableObject {
        readonly lifecycle = Lifecycle.install(this);
        readonly again = Lifecycle.install(this);
      }
      let twice = "no error";
      try {
        new Twice(ctx, env);
      } catch (error) {
        twice = `${(error as DokitError).code}: ${(error as Error).message}`;
      }
      class Sometimes extends DurableObject {
        constructor(ctx: DurableObjectState, env: Env, install: boolean) {
          super(ctx, env);
          if (install) Lifecycle.install(this);
        }
      }
      new Sometimes(ctx, env, true);
      const bare = new Sometimes(ctx, env, false) as unknown as { fetch(request: Request): Promise<Response> };
      const missing = await bare.fetch(new Request("http://do/")).then(
        () => "answered",
        (error: unknown) => `${(error as DokitError).code}: ${(error as Error).message}`,
      );
      return { twice, missing };
    });
    expect(result).toEqual({
      twice: "HANDLER_CONFLICT: dokit: Lifecycle.install(this) was called twice on one object",
      missing: "NOT_INSTALLED: dokit: this Sometimes did not call Lifecycle.install(this)",
    });
  });

  it("refuses a host that is not a DurableObject", () => {
    expect(() => Lifecycle.install({} as object)).toThrow(
      expect.objectContaining({ code: "NOT_A_DURABLE_OBJECT" }),
    );
  });
});

describe("dispatch table", () => {
  const claiming = (name: string, claim: (c: Parameters<Capability["attach"]>[0]) => void): Capability => ({
    capabilityName: name,
    attach: claim,
  });

  it("throws on a second claim of a key, naming both claimants", async () => {
    const error = await inObject((ctx) => {
      class Host extends DurableObject {
        readonly lifecycle = Lifecycle.install(this);
      }
      const lifecycle = new Host(ctx, env).lifecycle;
      lifecycle.use(claiming("Alpha", (c) => c.frame("rpc", () => {})));
      try {
        lifecycle.use(claiming("Beta", (c) => c.frame("rpc", () => {})));
      } catch (e) {
        return { code: (e as DokitError).code, message: (e as Error).message };
      }
      return null;
    });
    expect(error).toEqual({
      code: "DUPLICATE_CLAIM",
      message: 'dokit: the frame type "rpc" is claimed by Alpha and by Beta',
    });
  });

  it("refuses reserved names for frames, methods and routes' neighbours", async () => {
    const codes = await inObject((ctx) => {
      class Host extends DurableObject {
        readonly lifecycle = Lifecycle.install(this);
      }
      const out: string[] = [];
      for (const name of ["then", "constructor", "__proto__", "toString", "hasOwnProperty"]) {
        for (const kind of ["frame", "method"] as const) {
          const lifecycle = new Host(ctx, env).lifecycle;
          try {
            lifecycle.use(claiming("Bad", (c) => (kind === "frame" ? c.frame(name, () => {}) : c.method(name, noMethods))));
            out.push(`${kind}:${name}:accepted`);
          } catch (e) {
            out.push(`${kind}:${name}:${(e as DokitError).code}`);
          }
        }
      }
      return out;
    });
    expect(codes.every((entry) => entry.endsWith(":RESERVED_NAME"))).toBe(true);
    expect(codes).toHaveLength(10);
  });

  it("treats the same capability used twice as a no-op, and refuses a second catch-all", async () => {
    const result = await inObject((ctx) => {
      class Host extends DurableObject {
        readonly lifecycle = Lifecycle.install(this);
      }
      const lifecycle = new Host(ctx, env).lifecycle;
      const routes = new RouteCapability("/x");
      lifecycle.use(routes).use(routes);
      lifecycle.use(claiming("First", (c) => c.catchAllUpgrade(() => undefined)));
      try {
        lifecycle.use(claiming("Second", (c) => c.catchAllUpgrade(() => undefined)));
        return "accepted";
      } catch (e) {
        return (e as Error).message;
      }
    });
    expect(result).toBe("dokit: the catchAll slot is claimed by First and by Second; only one may hold it");
  });

  it("says in the user's words that one object installs one WebSockets", async () => {
    const result = await inObject((ctx) => {
      class Host extends DurableObject {
        readonly lifecycle = Lifecycle.install(this).use(new WebSockets({}));
      }
      try {
        new Host(ctx, env).lifecycle.use(new WebSockets({}));
        return "accepted";
      } catch (e) {
        return `${(e as DokitError).code}: ${(e as Error).message}`;
      }
    });
    expect(result).toBe("DUPLICATE_CLAIM: dokit: one object can install one WebSockets");
  });

  it("throws a clear error for use() after startup", async () => {
    const result = await inObject(async (ctx) => {
      class Host extends DurableObject {
        readonly lifecycle = Lifecycle.install(this);
      }
      const lifecycle = new Host(ctx, env).lifecycle;
      await lifecycle.start();
      try {
        lifecycle.use(new RouteCapability("/late", "LateCapability"));
        return "accepted";
      } catch (e) {
        return `${(e as DokitError).code}: ${(e as Error).message}`;
      }
    });
    expect(result).toBe(
      "LOCKED: dokit: cannot use LateCapability after the object started: call use() in a field initializer or the constructor",
    );
  });
});

describe("start()", () => {
  it("does not cache a failed start: the next request retries", async () => {
    const logs = captureConsole();
    const name = fresh("flaky");
    const first = await get(`/agents/flaky/${name}/ok`);
    expect(first.status).toBe(500);
    expect(await first.text()).toBe("Internal error");
    expect(logs.error).toEqual([
      `dokit: flaky-start/${name} failed to handle GET http://example.com/agents/flaky/${name}/ok DokitError: dokit: flaky-start failed to start: first start fails`,
    ]);
    const second = await get(`/agents/flaky/${name}/ok`);
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ attempts: 2 });
  });

  it("shares one attempt between concurrent callers", async () => {
    const stub = env.FLAKY.get(env.FLAKY.idFromName(fresh("concurrent")));
    // The first (shared) attempt fails for all three callers: one attempt, not three.
    expect(await stub.concurrentStarts()).toBe(1);
    // A later call retries once and succeeds.
    expect(await stub.concurrentStarts()).toBe(2);
  });

  it("runs capability start hooks then the host's onStart, with the routed props and the host in context", async () => {
    const name = fresh("props");
    const response = await get(`/agents/plain/${name}/hello?props=alice`);
    expect(((await response.json()) as { props: unknown }).props).toEqual({ user: "alice" });
    const info = await env.PLAIN.get(env.PLAIN.idFromName(name)).info();
    expect(info).toEqual({ name, startProps: { user: "alice" }, onStartAgentIsHost: true, starts: 1 });
  });
});

describe("HTTP fallthrough and errors", () => {
  it("sends unclaimed requests to the host's onRequest, with the host in context", async () => {
    const response = await get(`/agents/plain/${fresh("fall")}/fallthrough`);
    expect(await response.json()).toEqual({ fallthrough: true, agentIsHost: true });
  });

  it("answers a request a route passes on (undefined) as an unclaimed one: onRequest, else the delegating host's own answer", async () => {
    const kept = await get(`/agents/plain/${fresh("pass")}/pass/fallthrough`, { method: "POST" });
    expect(await kept.text()).toBe("kept by the route");
    const passed = await get(`/agents/plain/${fresh("pass")}/pass/fallthrough`);
    expect(await passed.json()).toEqual({ fallthrough: true, agentIsHost: true });
    const delegated = await get(`/agents/delegating/${fresh("pass")}/pass`);
    expect(await delegated.text()).toBe("the host's own answer");
  });

  it("answers 404 when neither a capability nor onRequest answers", async () => {
    const ok = await get(`/agents/alarmed/${fresh("nf3")}/nothing`);
    expect(ok.status).toBe(404);
    expect(await ok.text()).toBe("Not found");
  });

  it("declines an upgrade nobody claims with a 4501 close that names the capability to install, and logs it", async () => {
    const logs = captureConsole();
    const response = await get(`/agents/plain/${fresh("up")}`, { headers: { Upgrade: "websocket" } });
    const reason = "dokit: this object has no WebSockets: Lifecycle.install(this).use(webSockets) (building one is not enough)";
    expect(await refusedClose(response)).toEqual({ code: 4501, reason });
    expect(logs.warn).toEqual([`${reason} (class plain-host)`]);
  });

  it("answers a throwing handler with a short 500 and never sends the stack, logging the error instead", async () => {
    const logs = captureConsole();
    const name = fresh("boom");
    const response = await get(`/agents/plain/${name}/boom`);
    expect(response.status).toBe(500);
    const body = await response.text();
    expect(body).toBe("Internal error");
    expect(body).not.toContain("secret");
    expect(logs.error).toEqual([
      `dokit: plain-host/${name} failed to handle GET http://example.com/agents/plain/${name}/boom Error: secret detail at line 42`,
    ]);
  });
});

describe("routing", () => {
  it("kebab-cases binding names like the official client", () => {
    expect(kebab("MY_AGENT")).toBe("my-agent");
    expect(kebab("RoomAgent")).toBe("room-agent");
    expect(kebab("AIAssistant")).toBe("a-i-assistant");
    expect(kebab("Counter")).toBe("counter");
    expect(kebab("chat_room")).toBe("chat-room");
    expect(kebab("PLAIN")).toBe("plain");
  });

  it("returns null for paths that do not match, 400 for an unknown binding", async () => {
    expect(await routeAgentRequest(new Request("http://x/other/plain/a"), env)).toBeNull();
    expect(await routeAgentRequest(new Request("http://x/agents/plain"), env)).toBeNull();
    expect(matchAgentPath("/agents/plain/")).toBeNull();
    const logs = captureConsole();
    const unknown = await routeAgentRequest(new Request("http://x/agents/nope/a"), env);
    expect(unknown?.status).toBe(400);
    // The log lists the bindings wherever the Worker runs.
    expect(logs.warn).toEqual([expect.stringContaining("my-agent (MY_AGENT)")]);
    const text = await unknown?.text();
    expect(text).toMatch(/^Invalid request: no Durable Object binding is named "nope": the path names a binding in kebab case/);
    // A deployed Worker does not list its bindings; a local one (development) does.
    expect(text).not.toContain("my-agent (MY_AGENT)");
    const local = await routeAgentRequest(new Request("http://localhost:8787/agents/nope/a"), env);
    expect(await local?.text()).toContain("my-agent (MY_AGENT)");
    expect(logs.warn).toHaveLength(2);
  });

  it("routes ALL_CAPS bindings and percent-decodes names", async () => {
    const response = await get(`/agents/my-agent/${encodeURIComponent("room 1/é")}/hello`);
    expect(((await response.json()) as { name: string }).name).toBe("room 1/é");
  });

  it("answers CORS preflights without touching the object, and adds CORS headers", async () => {
    const preflight = await get(`/cors/flaky/${fresh("cors")}/ok`, { method: "OPTIONS" });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("Access-Control-Allow-Origin")).toBe("*");
    const ids = await import("cloudflare:test").then((t) => t.listDurableObjectIds(env.FLAKY));
    const name = fresh("cors-real");
    const before = ids.length;
    const real = await get(`/cors/plain/${name}/hello`);
    expect(real.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect((await import("cloudflare:test").then((t) => t.listDurableObjectIds(env.FLAKY))).length).toBe(before);
  });

  it("overwrites a client's own props header", async () => {
    const response = await get(`/agents/plain/${fresh("spoof")}/hello`, {
      headers: { "x-dokit-props": JSON.stringify({ user: "mallory" }) },
    });
    expect(((await response.json()) as { props: unknown }).props).toBeNull();
  });

  it("runs onBeforeConnect / onBeforeRequest, which may answer or replace the request", async () => {
    const blocked = await routeAgentRequest(new Request(`http://x/agents/plain/${fresh("b")}/hello`), env, {
      onBeforeRequest: () => new Response("denied", { status: 401 }),
    });
    expect(blocked?.status).toBe(401);
    const replaced = await routeAgentRequest(new Request(`http://x/agents/plain/${fresh("r")}/hello`), env, {
      onBeforeRequest: (request) => new Request(request, { method: "POST" }),
    });
    expect(((await replaced?.json()) as { method: string }).method).toBe("POST");
    const upgrade = await routeAgentRequest(
      new Request(`http://x/agents/plain/${fresh("u")}`, { headers: { Upgrade: "websocket" } }),
      env,
      { onBeforeConnect: () => new Response("no sockets for you", { status: 403 }) },
    );
    expect(upgrade?.status).toBe(403);
  });
});

describe("object names", () => {
  it("uses the id string as the name of an object made with newUniqueId", async () => {
    const id = env.PLAIN.newUniqueId();
    const info = await env.PLAIN.get(id).info();
    expect(info.name).toBe(id.toString());
  });
});

describe("getCurrentAgent", () => {
  it("is empty outside dokit work", () => {
    expect(getCurrentAgent()).toEqual({ agent: undefined, connection: undefined, request: undefined, props: undefined });
  });
});

describe("alarms", () => {
  it("runs dokit's alarm work without losing the host's own later alarm", async () => {
    const stub = env.ALARMED.get(env.ALARMED.idFromName(fresh("alarm")));
    const hostAt = Date.now() + 60 * 60_000;
    await stub.setHostAlarm(hostAt);
    await stub.scheduleDokit(Date.now() - 1);
    expect((await stub.read()).alarm).toBeLessThan(hostAt);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const after = await stub.read();
    expect(after).toMatchObject({ dokitRuns: 1, hostRuns: 0, alarm: hostAt });
  });

  it("keeps dokit's earlier work armed when the host sets a later alarm afterwards, also after a wake", async () => {
    const stub = env.ALARMED.get(env.ALARMED.idFromName(fresh("host-after")));
    const dokitAt = Date.now() + 60_000;
    await stub.scheduleDokit(dokitAt);
    await evictDurableObject(stub);
    const hostAt = Date.now() + 60 * 60_000;
    await stub.setHostAlarm(hostAt);
    expect((await stub.read()).alarm).toBe(dokitAt);
    await stub.scheduleDokit(Date.now() - 1);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.read()).toMatchObject({ dokitRuns: 1, hostRuns: 0, alarm: hostAt });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.read()).toMatchObject({ dokitRuns: 1, hostRuns: 1, alarm: null });
  });

  it("moves the host's own alarm when it sets it again while dokit work is pending", async () => {
    const stub = env.ALARMED.get(env.ALARMED.idFromName(fresh("host-again")));
    await stub.setHostAlarm(Date.now() + 30 * 60_000);
    await stub.scheduleDokit(Date.now() + 60_000);
    const hostAt = Date.now() + 2 * 60 * 60_000;
    await stub.setHostAlarm(hostAt);
    await stub.scheduleDokit(Date.now() - 1);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.read()).toMatchObject({ dokitRuns: 1, hostRuns: 0, alarm: hostAt });
  });

  it("runs the host's onAlarm for an alarm the host set itself, with the host in context", async () => {
    const stub = env.ALARMED.get(env.ALARMED.idFromName(fresh("host-alarm")));
    await stub.setHostAlarm(Date.now() + 60_000);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.read()).toMatchObject({ dokitRuns: 0, hostRuns: 1, hostAgentOk: true, alarm: null });
  });

  it("finds the claimed work after the object was evicted between scheduling and the alarm", async () => {
    const stub = env.ALARMED.get(env.ALARMED.idFromName(fresh("evicted-alarm")));
    await stub.scheduleDokit(Date.now() - 1);
    await evictDurableObject(stub);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.read()).toMatchObject({ dokitRuns: 1, hostRuns: 0, alarm: null });
  });

  it("leaves the alarm to the host, with no dokit storage, when no capability claims alarm work", async () => {
    const stub = env.PLAIN.get(env.PLAIN.idFromName(fresh("plain-alarm")));
    await runInDurableObject(stub, async (instance, ctx) => {
      const host = instance as unknown as { onAlarm: () => void; ran: number };
      host.ran = 0;
      host.onAlarm = () => void host.ran++;
      await ctx.storage.setAlarm(Date.now() - 1);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const keys = await runInDurableObject(stub, async (instance, ctx) => ({
      ran: (instance as unknown as { ran: number }).ran,
      keys: [...(await ctx.storage.list()).keys()],
      alarm: await ctx.storage.getAlarm(),
    }));
    expect(keys).toEqual({ ran: 1, keys: [], alarm: null });
  });

  it("refuses a second claim of an alarm key, naming both capabilities", async () => {
    const message = await inObject((ctx) => {
      class Host extends DurableObject {
        readonly lifecycle = Lifecycle.install(this)
          .use({ capabilityName: "Alpha", attach: (claims) => void claimAlarm(claims, "tick", () => {}) });
      }
      const lifecycle = new Host(ctx, env).lifecycle;
      try {
        lifecycle.use({ capabilityName: "Beta", attach: (claims) => void claimAlarm(claims, "tick", () => {}) });
      } catch (e) {
        return `${(e as DokitError).code}: ${(e as Error).message}`;
      }
      return "accepted";
    });
    expect(message).toBe('DUPLICATE_CLAIM: dokit: the alarm key "tick" is claimed by Alpha and by Beta');
  });
});
