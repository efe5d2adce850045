// Bundle guard: minimal workers built with esbuild in-process, the same
// builds `pnpm bench` reports (bench/bundle.ts). Fails when a subpath grows
// past its ceiling or pulls in code it must not carry, and when a case it
// guards is missing from bench/bundle.ts (renamed or removed): a guard that
// skips proves nothing. Why these bundles stay apart: docs/architecture.md.
import { describe, expect, it } from "vitest";

// bench/bundle.ts runs on Node; it is loaded by URL so this package's
// typecheck (workers types, no Node types) does not take it in.
interface BundleCase {
  name: string;
  needs: string[];
}
interface BundleResult {
  name: string;
  minified: number;
  gzip: number;
  code: string;
  inputs: Record<string, number>;
}
interface BundleLib {
  DOKIT_CASES: BundleCase[];
  COMPARISON_CASES: BundleCase[];
  FORBIDDEN: Record<
    | "capnweb"
    | "mcpSdk"
    | "mcpClientSdk"
    | "dokitMcpClient"
    | "zod"
    | "dokitState"
    | "dokitCallables"
    | "dokitScheduler"
    | "dokitQueue"
    | "croner"
    | "dokitInspector"
    | "dokitContext",
    string
  >;
  buildCase(c: BundleCase | { name: string; needs: string[]; source: string }): Promise<BundleResult>;
  exportedSubpaths(): string[];
  topContributors(result: BundleResult, n?: number): [string, number][];
}
const lib = (await import(/* @vite-ignore */ new URL("../../../../bench/bundle.ts", import.meta.url).href)) as BundleLib;
const { FORBIDDEN } = lib;
type Marker = keyof typeof FORBIDDEN;

const KB = 1024;
const exported = lib.exportedSubpaths();

/**
 * Gzip ceilings (level 9, bytes) and what each bundle must not contain.
 * A ceiling is today's size plus a little headroom unless a size target is set
 * (`target`); raise one only with a measured reason in the commit.
 */
const GUARDS: Record<string, { ceiling: number; target?: number; forbid: Marker[]; why: string }> = {
  lifecycle: {
    // 3.1 KB today (3,127 B). Alarm sharing
    // (lifecycle/alarms.ts) is only bundled when a capability calls claimAlarm.
    // Raised from 3 KB (2,918 B) for issue 19 (+209 B): the entry points live on the host
    // class's prototype, installed once per class, so an object built on a wake creates and
    // defines none; class names and callables' method tables are kept per class; a socket
    // event that needs no start and no promise is answered without one.
    // Raised to 3,275 B (3,256 B measured, +129 B) for issue 19's wake: the installed socket entry
    // points answer an event handled synchronously without a promise, and a class's later
    // instances (one per wake) skip the install checks and the entry-point loop. In one
    // interleaved run against the same source without them, wake → echo went from 58 to 46 µs
    // over raw at 10 open connections and from 109 to 95 µs at 1,000.
    // Raised to 3,675 B (3,658 B measured, +402 B) for issue 19's wake, wiring on demand
    // (docs/lifecycle.md): a later object of a class whose first object used only State,
    // WebSockets and Callables attaches them when an event needs the dispatch table, not as it is
    // built, and a socket event reaches the socket owner with fewer calls. Every object pays for
    // the plan and the checks; an object that cannot wait (a Scheduler, a Queue, MCP) gains
    // nothing from them. In six alternated pairs of `bench/run.ts --only=open`, wake → echo went
    // from 1.065 / 1.06 / 1.11× raw to 1.05 / 1.05 / 1.06× (medians at 10 / 100 / 1,000 open).
    ceiling: 3675,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState", "dokitCallables"],
    why: "the core every object pays for",
  },
  "lifecycle + websockets": {
    // Target 6 KB was read as 6,000 bytes and met at 5,973 B. It is now 6,300 B
    // (6,251 B measured), raised on purpose for three things a socket-only object
    // needs: the refused-connection path that makes a failure while opening reach
    // real clients as a 1011 close, and the destroy reset that completes the 1001
    // closes (+74 B); the private handle Cap'n Web plugs into instead of public
    // members (+~90 B); and the shared wire helpers and dispatch view that replaced
    // copies and lifecycle wiring (+~110 B). It carries the JSON-rpc part of
    // Callables (src/shared/: method table, answers, streams: ~0.8 KB gzip) for the
    // short form new WebSockets({ callables: target }), and no Callables capability
    // code (argument schemas). Raised to 6,330 B (6,325 B measured, +27 B) for the socket owner's
    // protocol broadcast (SocketOwner.protocol, Dispatch.broadcastProtocol) through which
    // McpClients sends cf_agent_mcp_servers without importing WebSockets.
    // Raised to 6,660 B (6,658 B measured; 6,339 B without them: +319 B) for the event hooks of
    // dokit/observability (docs/observability.md): the connect, refused, disconnect and frame
    // call sites, the rpc timing and chunk count in src/shared/, the lifecycle's start, alarm,
    // destroy and error sites (+100 B of it, in the lifecycle bundle too), and the opening time
    // kept in the attachment. Each is one property read while Observability is not installed;
    // the event builders themselves live in dokit/observability, bundled only where it is used.
    // Raised to 6,700 B (6,699 B measured, +41 B) for issue 19: a lighter connect path (the URL
    // parsed once, the handler context entered only when a handler set has `onConnect`: about
    // 7 % of an upgrade's time inside the object; no generator for connect frames), and claims
    // as a class instead of a closure per claim kind, which an object builds on every wake
    // (its constructor went from about 28 to 16 µs in workerd).
    // Raised to 7,350 B (7,310 B measured, +611 B) for issue 19's hot path, measured at
    // saturation (bench README): only user code runs in the connection's context (an rpc
    // frame is parsed and answered outside it: rpc CPU per message 1.09× → 1.03× raw); a
    // synchronous handler or callable is answered without a promise; a connection's context
    // runner is built on its second message in a wake; the socket owner is one object with
    // prototype methods; a Connection is one prototype change, not five property definitions.
    // The constructors an object runs on every wake went from about 18 to 7 µs in workerd.
    // Raised to 7,640 B (7,620 B measured, +270 B) for issue 19's wake: the lifecycle's part above
    // (+129 B); an attachment without user state is stored as a string whose flags are parsed only
    // when read, and a broadcast makes no Connections, so a socket's first message or broadcast
    // after a wake decodes no object (+~140 B). In two interleaved runs against the previous
    // source, wake → echo over raw went from 84 and 89 µs to 63 and 61 at 10 open; at 1,000 open
    // from 116 and 64 to 110 and 65 µs, and after a broadcast wake from 164 and 127 to 132 and 116.
    // Raised to 8,155 B (8,133 B measured, +513 B) for issue 19's wake, wiring on demand: the
    // lifecycle's part above (+402 B), and in WebSockets a socket owner usable before the capability
    // is attached, a bare callables target served from attach(), and a message that no capability
    // claims handed to onMessage without the frame parse or the context module's calls (+111 B).
    // Raised to 8,290 B (8,263 B measured, +130 B) for issue 19's memory per connection: a
    // connection that nothing in its connect sequence receives opens plain, never made a
    // Connection, so workerd may drop its JavaScript object while it idles. Isolate heap per
    // connection at 4,000 open (bench README): 0.387 KB (2.29× raw) before, 0.169 KB (1.00×) after.
    ceiling: 8290,
    target: 8290,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState", "dokitCallables"],
    why: "a socket-only object must not pay for State, Callables' schemas, Cap'n Web, MCP or zod",
  },
  "lifecycle + websockets, callables short form": {
    // 6.0 KB today: the short form adds only the user's class; it is served by the
    // JSON-rpc part above, not by the Callables capability. Raised with the bundle above to
    // 6,690 B (6,683 B measured; 6,368 B before dokit/observability's hooks: +315 B), then
    // with it to 6,730 B (6,729 B measured) for issue 19's connect path and claims, then
    // with it to 7,380 B (7,334 B measured) for issue 19's hot path, then with it to 7,670 B
    // (7,646 B measured) for issue 19's wake, then with it to 8,185 B (8,155 B measured) for wiring on demand,
    // then with it to 8,320 B (8,288 B measured) for connections opened plain.
    ceiling: 8320,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState", "dokitCallables"],
    why: "the short form of installing Callables does not pull argument-schema code",
  },
  "lifecycle + callables": {
    // 4.8 KB today (4,869 B); Cap'n Web is opt-in (dokit/capnweb) and never reached from dokit/callables.
    // Raised from 4.5 KB with the lifecycle for issue 19 (an rpc call enters the connection's
    // context only around the method, and a synchronous method is answered without a promise).
    // Raised to 5,060 B (5,038 B measured) with the lifecycle for issue 19's wake, and to 5,475 B
    // (5,460 B measured) with it for wiring on demand.
    ceiling: 5475,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState"],
    why: "a bundle that imports dokit/callables but never upgrades to Cap'n Web does not pay for it",
  },
  "lifecycle + state": {
    // 5.2 KB today (5,373 B). A function validator: no schema library.
    // Raised from 5.25 KB with the lifecycle for issue 19, to 5,530 B with it for issue 19's wake,
    // and to 5,925 B (5,908 B measured) with it for wiring on demand.
    ceiling: 5925,
    forbid: ["capnweb", "mcpSdk", "zod"],
    why: "dokit/state without a zod schema does not pull zod",
  },
  "lifecycle + websockets + state + callables": {
    // Target 12 KB; 8.1 KB today.
    ceiling: 12 * KB,
    target: 12 * KB,
    forbid: ["capnweb", "mcpSdk", "zod"],
    why: "the full real-time stack without Cap'n Web",
  },
  "lifecycle + schedule": {
    // 18.0 KB today (18,479 B), of which croner is about 10 KB gzip (33 KB minified, one class:
    // it does not tree-shake). It buys IANA time zones with defined DST rules (docs/schedule.md);
    // cron-schedule (the reference's choice, 2.6 KB) computes in the runtime's time zone only.
    // Adopting the reference's tables (schedule/adopt.ts) is about 0.8 KB of the rest.
    // Raised to 18,840 B (18,811 B measured) with the lifecycle for issue 19's wake, and to 19,215 B
    // (19,200 B measured) with it for wiring on demand, which a Scheduler's objects carry but do not use.
    // Raised to 19,925 B (19,910 B measured, +710 B) for refusing what cannot be stored or armed:
    // times after the latest alarm time, jobs over the 2 MB row limit, and setting aside bad rows.
    ceiling: 19925,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState", "dokitQueue"],
    why: "timed work pays for its cron library, and for nothing else",
  },
  "lifecycle + queue": {
    // 7.2 KB today (7,397 B): the job table and runner shared with the Scheduler, the
    // reference-table adoption (queue/adopt.ts), no cron. Reading due jobs ahead, 32 per
    // query (job-table.ts takeDue), added 230 B; it keeps firing them within 1.15× a raw loop.
    // Raised to 7.5 KB (7,571 B) with the lifecycle for issue 19, to 7,720 B (7,702 B
    // measured) with it for issue 19's wake, and to 8,110 B (8,095 B measured) with it for wiring
    // on demand, which a Queue's objects carry but do not use. Raised to 8,785 B (8,769 B measured,
    // +674 B) for refusing what cannot be stored or armed (the shared job table, runner and alarm).
    ceiling: 8785,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState", "dokitScheduler", "croner"],
    why: "background work does not pull the Scheduler or its cron library",
  },
  "lifecycle + mcp-client": {
    // 94.2 KB today (96,433 B): the official MCP client SDK is nearly all of it (197 KB minified,
    // plus zod 4 at 106 KB minified, which the SDK imports for its protocol schemas); dokit's
    // McpClients is about 11 KB minified. Paid only by objects that import dokit/mcp-client.
    ceiling: 100 * KB,
    forbid: ["capnweb", "dokitState", "dokitQueue", "dokitScheduler"],
    why: "an MCP client pays for the client SDK, and for no other capability",
  },
  routing: {
    // 1.0 KB today: the Worker-side router.
    ceiling: 1.5 * KB,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState"],
    why: "the Worker entry must stay tiny",
  },
  protocol: {
    // 0.3 KB today: frame literals and kebab().
    ceiling: 0.75 * KB,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState"],
    why: "shared by server and client",
  },
};

const cases = new Map([...lib.DOKIT_CASES, ...lib.COMPARISON_CASES].map((c) => [c.name, c]));
/** Cases the guard builds besides GUARDS' keys. */
const MCP_CASE = "mcp (one tool)";
const MCP_SDK_CASE = "MCP SDK handler alone (one tool)";
const built = new Map<string, Promise<BundleResult>>();

/**
 * @returns the bench case named `name`
 * @throws naming the case when bench/bundle.ts has none by that name (renamed or removed)
 */
function caseNamed(name: string): BundleCase {
  const c = cases.get(name);
  if (!c) throw new Error(missingCase(name));
  return c;
}

/** @returns the failure message naming a missing case */
function missingCase(name: string): string {
  return `bench/bundle.ts has no bundle case named "${name}": renamed or removed? Rename it here too`;
}

function build(name: string): Promise<BundleResult> {
  const c = caseNamed(name);
  const unexported = c.needs.filter((need) => !exported.includes(need));
  if (unexported.length) throw new Error(`bundle case "${name}" needs subpaths packages/dokit/entries.json does not export: ${unexported.join(", ")}`);
  let result = built.get(name);
  if (!result) built.set(name, (result = lib.buildCase(c)));
  return result;
}

function describeSize(result: BundleResult): string {
  const top = lib
    .topContributors(result, 5)
    .map(([input, bytes]) => `${input} ${bytes} B`)
    .join(", ");
  return `${result.name}: ${result.gzip} B gzip, ${result.minified} B minified (largest inputs, minified: ${top})`;
}

describe("bundle guard", () => {
  // Every case the guard checks exists under its name: a renamed case fails here, by name.
  it.each([...Object.keys(GUARDS), MCP_CASE, MCP_SDK_CASE])("finds the bench case %j", (name) => {
    expect(cases.has(name), missingCase(name)).toBe(true);
  });

  for (const [name, guard] of Object.entries(GUARDS)) {
    describe(name, () => {
      it(`stays under ${(guard.ceiling / KB).toFixed(2)} KB gzip (${guard.why})`, async () => {
        const result = await build(name);
        expect(result.gzip, describeSize(result)).toBeLessThanOrEqual(guard.ceiling);
      });
      for (const marker of guard.forbid) {
        it(`does not contain ${marker} code`, async () => {
          const { code } = await build(name);
          expect(code.includes(FORBIDDEN[marker]), `found ${JSON.stringify(FORBIDDEN[marker])}`).toBe(false);
        });
      }
    });
  }

  // dokit/mcp: what dokit adds on top of the MCP SDK (the bundle of an object using
  // dokit/mcp with one tool vs the SDK handler alone). About 7 KB gzip when first measured.
  describe(MCP_CASE, () => {
    it("adds at most 10 KB gzip to the MCP SDK's own handler", async () => {
      const [ours, sdk] = await Promise.all([build(MCP_CASE), build(MCP_SDK_CASE)]);
      expect(ours.gzip - sdk.gzip, `${describeSize(ours)}; SDK alone ${sdk.gzip} B gzip`).toBeLessThanOrEqual(10 * KB);
    });
    for (const marker of ["capnweb", "dokitState"] as const) {
      it(`does not contain ${marker} code`, async () => {
        const { code } = await build(MCP_CASE);
        expect(code.includes(FORBIDDEN[marker]), `found ${JSON.stringify(FORBIDDEN[marker])}`).toBe(false);
      });
    }
  });

  // MCP client code (the client SDK and McpClients) stays in the bundles that import dokit/mcp-client.
  describe("no other subpath pulls in MCP client code", () => {
    const CLIENT: Marker[] = ["mcpClientSdk", "dokitMcpClient"];
    const others = [...Object.keys(GUARDS), MCP_CASE].filter((name) => name !== "lifecycle + mcp-client");
    for (const name of others) {
      it(`${name} carries none of it`, async () => {
        const { code } = await build(name);
        for (const marker of CLIENT) expect(code.includes(FORBIDDEN[marker]), `${name} contains ${marker} (${JSON.stringify(FORBIDDEN[marker])})`).toBe(false);
      });
    }
  });

  // The Scheduler, the Queue and croner stay in the bundles that import them.
  describe("no other subpath pulls in the scheduler, the queue or the cron library", () => {
    const JOBS: Marker[] = ["dokitScheduler", "dokitQueue", "croner"];
    const others = [...Object.keys(GUARDS), MCP_CASE].filter((name) => name !== "lifecycle + schedule" && name !== "lifecycle + queue");
    for (const name of others) {
      it(`${name} carries none of them`, async () => {
        const { code } = await build(name);
        for (const marker of JOBS) expect(code.includes(FORBIDDEN[marker]), `${name} contains ${marker} (${JSON.stringify(FORBIDDEN[marker])})`).toBe(false);
      });
    }
  });

  // dokit/inspector: an object that does not install it pays nothing, not even for the import.
  describe("the inspector stays with the objects that install it", () => {
    const BASE = "lifecycle + websockets";
    const IMPORTED = "lifecycle + websockets, inspector imported but not installed";
    const INSTALLED = "lifecycle + websockets + inspector";
    it("importing dokit/inspector without installing it adds no byte", async () => {
      const [base, imported] = await Promise.all([build(BASE), build(IMPORTED)]);
      expect(imported.minified).toBe(base.minified);
      expect(imported.gzip).toBe(base.gzip);
      // The same code, up to which short name the minifier gives which binding (it may break a tie differently).
      const names = (code: string) => code.replace(/(?<![\w$.])[A-Za-z_$][\w$]?(?![\w$])/g, "_");
      expect(names(imported.code)).toBe(names(base.code));
      expect(imported.code.includes(FORBIDDEN.dokitInspector)).toBe(false);
    });
    it("installed, it adds at most 7 KB gzip (the page is about 4.5 KB of that)", async () => {
      const [base, installed] = await Promise.all([build(BASE), build(INSTALLED)]);
      expect(installed.code, "the marker must be real").toContain(FORBIDDEN.dokitInspector);
      expect(installed.gzip - base.gzip, `${describeSize(installed)}; without it ${base.gzip} B gzip`).toBeLessThanOrEqual(7 * KB);
    });
    for (const name of [...Object.keys(GUARDS), MCP_CASE]) {
      it(`${name} carries no inspector code`, async () => {
        const { code } = await build(name);
        expect(code.includes(FORBIDDEN.dokitInspector)).toBe(false);
      });
    }
  });

  // getCurrentAgent()'s storage: a Worker that never imports it enters no context per event
  // (docs/lifecycle.md), so its bundle must not carry it. Only the MCP server and client read it.
  describe("the context stays with the bundles that can read it", () => {
    const READING = "lifecycle + websockets + getCurrentAgent";
    const readers = new Set([READING, MCP_CASE, "lifecycle + mcp-client"]);
    it("importing getCurrentAgent() brings its storage", async () => {
      const { code } = await build(READING);
      expect(code, "the marker must be real").toContain(FORBIDDEN.dokitContext);
    });
    it("the MCP server, which reads it, brings it", async () => {
      expect((await build(MCP_CASE)).code).toContain(FORBIDDEN.dokitContext);
    });
    for (const name of Object.keys(GUARDS).filter((name) => !readers.has(name))) {
      it(`${name} carries none of it`, async () => {
        const { code } = await build(name);
        expect(code.includes(FORBIDDEN.dokitContext), `${name} contains ${JSON.stringify(FORBIDDEN.dokitContext)}`).toBe(false);
      });
    }
  });

  // Every size target is met: no ceiling above may sit over its target.
  it("keeps every ceiling at or under its target", () => {
    for (const [name, guard] of Object.entries(GUARDS)) {
      if (guard.target !== undefined) expect(guard.ceiling, name).toBeLessThanOrEqual(guard.target);
    }
  });

  // The markers must be real, or the must-not-contain checks above prove nothing.
  describe("markers are found where the code is", () => {
    const probe = (name: string, source: string) => lib.buildCase({ name, needs: [], source });
    it("capnweb", async () => {
      const { code } = await probe("capnweb", `import { newWebSocketRpcSession } from "capnweb"; export default { fetch: (r) => newWebSocketRpcSession(r.url) };`);
      expect(code).toContain(FORBIDDEN.capnweb);
    });
    it("the MCP SDK", async () => {
      const { code } = await build(MCP_SDK_CASE);
      expect(code).toContain(FORBIDDEN.mcpSdk);
    });
    it("zod", async () => {
      const { code } = await probe("zod", `import { z } from "zod"; export default { fetch: (r) => new Response(String(z.string().safeParse(r.url).success)) };`);
      expect(code).toContain(FORBIDDEN.zod);
    });
    it("dokit's Callables capability", async () => {
      const { code } = await build("lifecycle + callables");
      expect(code).toContain(FORBIDDEN.dokitCallables);
    });
    it("dokit's Scheduler and croner", async () => {
      const { code } = await build("lifecycle + schedule");
      expect(code).toContain(FORBIDDEN.dokitScheduler);
      expect(code).toContain(FORBIDDEN.croner);
    });
    it("dokit's Queue", async () => {
      const { code } = await build("lifecycle + queue");
      expect(code).toContain(FORBIDDEN.dokitQueue);
    });
    it("the MCP client SDK and dokit's McpClients", async () => {
      const { code } = await build("lifecycle + mcp-client");
      expect(code).toContain(FORBIDDEN.mcpClientSdk);
      expect(code).toContain(FORBIDDEN.dokitMcpClient);
    });
    it("dokit's State", async () => {
      const { code } = await build("lifecycle + state");
      expect(code).toContain(FORBIDDEN.dokitState);
    });
  });
});
