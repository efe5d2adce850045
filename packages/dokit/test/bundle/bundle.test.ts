// Bundle guard: minimal workers (cases.ts) built with esbuild in-process
// (build.ts), the same builds `pnpm bench` reports. Fails when a subpath grows
// past its ceiling or pulls in code it must not carry (markers.ts), and when a
// case it guards is missing (renamed or removed): a guard that skips proves
// nothing. Why these bundles stay apart: docs/architecture.md.
import { describe, expect, it } from "vitest";
import { type BundleCase, type BundleResult, buildCase, exportedSubpaths, topContributors } from "./build.ts";
import { DOKIT_CASES, REFERENCE_CASES } from "./cases.ts";
import { FORBIDDEN } from "./markers.ts";
type Marker = keyof typeof FORBIDDEN;

const KB = 1024;
const exported = exportedSubpaths();

/**
 * Gzip ceilings (level 9, bytes) and what each bundle must not contain.
 * A ceiling is today's size plus a little headroom unless a size target is set
 * (`target`); raise one only with a measured reason in the commit.
 */
const GUARDS: Record<string, { ceiling: number; target?: number; forbid: Marker[]; why: string }> = {
  lifecycle: {
    // Per-class entry points, claims, wiring on demand and upgrades refused with a 4000-4999 close (3,803 B measured).
    // Refusing what arrives while destroy() resets the instance (an upgrade with 1012, a request with 503) adds 74 B (3,877 B measured).
    // Connection slots' door in the core (Dispatch.connectionSlot, forwarding to the socket owner) adds 33 B (3,910 B measured).
    // Frame claims that declare needsWiring (the wake plan keeps their types instead of WebSockets naming them) add 16 B in the core (3,926 B measured).
    ceiling: 3930,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState", "dokitCallables"],
    why: "the core every object pays for",
  },
  "lifecycle + websockets": {
    // The lifecycle, the socket path and the JSON-rpc engine (src/rpc/) for `new WebSockets({ callables })`; no argument
    // schemas (8,994 B measured). Security and first-contact work carries it past 8 KB: client ids in their own tag
    // namespace, the Origin kept per connection, refusals as close codes and the rpc hint for Durable Object methods;
    // each capability builds its own event payloads (docs/observability.md). The heartbeat option (the runtime's ping
    // answer) adds 121 B (9,115 B measured); its sweep is a separate export and stays out. broadcast's `coalesce`
    // key and the rateLimit check on the message path add about 100 B (9,220 B measured); coalesceBroadcasts and
    // RateLimit themselves are separate exports. The presence option's close hook adds 25 B, keepsAwake() (a
    // coalescing tick waiting, for the inspector and expectHibernates) 49 B (9,294 B measured). WebSockets split into one
    // file per part (its fields keyed by module symbols, the parts top-level functions) adds 163 B (9,457 B measured).
    // The yjs option (a wire server installed with the WebSockets, its connections' protocol decision) adds 18 B (9,475 B measured).
    // count(), kept between socket changes (an accept adds one; a close, an error or a close server code starts marks it
    // stale, a Connection's own close() 30 B of it) so a room shard's deliveries and joins walk no sockets, adds 181 B (9,656 B measured).
    // Public ids (each connection's SHA-256-derived id kept in its attachment, shown to others instead of its `_pk`), dropping what a connection the server closed still sends and ending its presence at once, the sweep's hook for that, and destroy()'s refusal add 361 B (10,017 B measured).
    // WebSockets' plug-in door (the presence, yjs and plugins options registered the same way, plug-in hooks as handler sets, binary claims ahead of onMessage) and connection slots (named, bounded, checked values in the attachment; slot.ts) add 434 B (10,451 B measured).
    // The rate limit, the heartbeat (its ping answer and sweep, a plug-in built by the option) and Cap'n Web registered through the plug-in door (its drops, accepted, closed and transport members) add 140 B (10,591 B measured).
    // The inbound path read in one file (websockets/dispatch.ts), frame claims that declare needsWiring (the wake plan keeps their types), and plug-ins' connections tagged on accept for fan-out through the tag index add 81 B (10,532 B measured).
    // The plug-in door's new members, one inbound path with wiring declared per claim, the plug-in tags, the core's helpers
    // in their engine folders and the job engine's due readers together: 10,673 B measured.
    // The plug-in door's built(door) (slots and a protocol broadcast before attach, so the rate limit keeps wiring on demand; 14 B),
    // identity fields and connectFrame, and the state's sync as a plug-in of it (websockets/state-sync.ts): 10,788 B measured.
    ceiling: 10790,
    target: 10790,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState", "dokitCallables"],
    why: "a socket-only object must not pay for State, Callables' schemas, Cap'n Web, MCP or zod",
  },
  "lifecycle + websockets, callables short form": {
    // The bundle above plus the user's class: the short form is served by the JSON-rpc engine, not the Callables capability (9,317 B measured);
    // WebSockets split into one file per part adds 169 B (9,486 B measured); the yjs option 18 B (9,504 B measured);
    // count() kept between socket changes 181 B (9,685 B measured).
    // Public ids, closed connections dropped and destroy()'s refusal add 357 B (10,042 B measured).
    // WebSockets' plug-in door (the presence, yjs and plugins options registered the same way, plug-in hooks as handler sets, binary claims ahead of onMessage) and connection slots (named, bounded, checked values in the attachment; slot.ts) add 428 B (10,470 B measured).
    // The rate limit, the heartbeat (its ping answer and sweep, a plug-in built by the option) and Cap'n Web registered through the plug-in door (its drops, accepted, closed and transport members) add 156 B (10,626 B measured).
    // The inbound path read in one file (websockets/dispatch.ts), frame claims that declare needsWiring (the wake plan keeps their types), and plug-ins' connections tagged on accept for fan-out through the tag index add 88 B (10,558 B measured).
    // The plug-in door's new members, one inbound path with wiring declared per claim, the plug-in tags, the core's helpers
    // in their engine folders and the job engine's due readers together: 10,702 B measured.
    // The plug-in door's built(door) (slots and a protocol broadcast before attach, so the rate limit keeps wiring on demand; 14 B),
    // identity fields and connectFrame, and the state's sync as a plug-in of it (websockets/state-sync.ts): 10,818 B measured.
    ceiling: 10820,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState", "dokitCallables"],
    why: "the short form of installing Callables does not pull argument-schema code",
  },
  "lifecycle + websockets + presence": {
    // The socket-only object plus Presence: its frame, tick, value checks (a function or a Standard Schema) and snapshot (10,564 B measured);
    // WebSockets split into one file per part adds 162 B (10,726 B measured); the yjs option 30 B (10,756 B measured).
    // The link dokit/rooms uses to spread presence over a room's shards (the other shards' entries merged into the
    // snapshot and each tick's frame, the tick's own changes handed to the room) adds 332 B (11,088 B measured).
    // WebSockets' count() kept between socket changes adds 176 B (11,264 B measured).
    // Public ids and closed connections as above, and one pending answer per watcher (a snapshot only once the last has left the socket's buffer, owed otherwise; no changes past 64 KiB waiting) add 686 B (11,950 B measured).
    // WebSockets' plug-in door (the presence, yjs and plugins options registered the same way, plug-in hooks as handler sets, binary claims ahead of onMessage) and connection slots (named, bounded, checked values in the attachment; slot.ts) add; Presence's values and watching marks in slots, 421 B (12,371 B measured).
    // The shared helpers out of lifecycle/wire.ts (frames/, utf8/, thenable/) and protocol/ split by family: the same
    // code in another module order, 19 B more gzip, minified +8 B (12,390 B measured). Reading `bufferedAmount` through
    // one helper that takes a runtime without it as an empty buffer: 12,403 B measured.
    // The rate limit, the heartbeat (its ping answer and sweep, a plug-in built by the option) and Cap'n Web registered through the plug-in door (its drops, accepted, closed and transport members) add 142 B (12,513 B measured).
    // Both together with the presence helper above: 12,543 B measured.
    // The inbound path read in one file (websockets/dispatch.ts), frame claims that declare needsWiring (the wake plan keeps their types), and plug-ins' connections tagged on accept for fan-out through the tag index add 71 B (12,442 B measured).
    // The plug-in door's new members, one inbound path with wiring declared per claim, the plug-in tags, the core's helpers
    // in their engine folders and the job engine's due readers together: 12,620 B measured.
    // The plug-in door's built(door) (slots and a protocol broadcast before attach, so the rate limit keeps wiring on demand; 14 B),
    // identity fields and connectFrame, and the state's sync as a plug-in of it (websockets/state-sync.ts): 12,744 B measured.
    ceiling: 12750,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState", "dokitCallables"],
    why: "presence pays for itself only, not for State, Callables or a schema library",
  },
  "lifecycle + websockets + yjs": {
    // The socket-only object plus dokit/yjs (yjs itself external: the application's peer): the wire codec,
    // awareness entries, the row-split store, large updates cut to fit messages, loading past an altered row and
    // measuring storage without loading, awareness news relayed once and kept per connection for its own clients,
    // and YjsDocument with its awareness relay in a class of its own (13,287 B measured on the WebSockets split into one file per part).
    // getAwareness(connection), a connection's kept awareness read back for the Inspector, adds 66 B (13,353 B measured).
    // A client's update relayed as the bytes it came in (no re-encoding per update) adds 56 B (13,409 B measured).
    // WebSockets' count() kept between socket changes adds 173 B (13,582 B measured).
    // Awareness ids owned by the connection that introduced them, per-connection and per-document caps, one query
    // answer per change, and updates bounded in bytes and structs (counted before storing) add 979 B (14,561 B measured).
    // A repeated sync step 1 answered once per document change (answers.ts, shared with the awareness query) adds 71 B (14,632 B measured).
    // Public ids, closed connections dropped and destroy()'s refusal add 368 B (15,000 B measured).
    // WebSockets' plug-in door (the presence, yjs and plugins options registered the same way, plug-in hooks as handler sets, binary claims ahead of onMessage) and connection slots (named, bounded, checked values in the attachment; slot.ts) add; the Yjs mark and awareness in a slot and binary messages claimed through the door, 488 B (15,488 B measured).
    // The rate limit, the heartbeat (its ping answer and sweep, a plug-in built by the option) and Cap'n Web registered through the plug-in door (its drops, accepted, closed and transport members) add 151 B (15,639 B measured).
    // The inbound path read in one file (websockets/dispatch.ts), frame claims that declare needsWiring (the wake plan keeps their types), and plug-ins' connections tagged on accept for fan-out through the tag index add 73 B (15,561 B measured).
    // The plug-in door's new members, one inbound path with wiring declared per claim, the plug-in tags, the core's helpers
    // in their engine folders and the job engine's due readers together: 15,702 B measured.
    // The plug-in door's built(door) (slots and a protocol broadcast before attach, so the rate limit keeps wiring on demand; 14 B),
    // identity fields and connectFrame, and the state's sync as a plug-in of it (websockets/state-sync.ts): 15,831 B measured.
    ceiling: 15840,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState", "dokitCallables", "yjs"],
    why: "a Yjs document pays for its wire and store, not for State, Callables or Cap'n Web",
  },
  "lifecycle + callables": {
    // The lifecycle and the Callables capability with its argument schemas; Cap'n Web is opt-in (dokit/capnweb) (5,802 B measured).
    // destroy()'s refusal adds about 50 B (5,876 B measured).
    // Connection slots' door in the core adds 34 B (5,910 B measured).
    // Frame claims that declare needsWiring (the wake plan keeps their types instead of WebSockets naming them) add 22 B in the core (5,932 B measured).
    ceiling: 5940,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState"],
    why: "a bundle that imports dokit/callables but never upgrades to Cap'n Web does not pay for it",
  },
  "lifecycle + state": {
    // The lifecycle and State with a function validator (no schema library); values over one SQLite row are cut into parts (6,915 B measured).
    // destroy()'s refusal adds about 50 B (6,981 B measured).
    // Connection slots' door in the core adds 33 B (7,014 B measured).
    // Frame claims that declare needsWiring (the wake plan keeps their types instead of WebSockets naming them) add 24 B in the core (7,038 B measured).
    ceiling: 7040,
    forbid: ["capnweb", "mcpSdk", "zod"],
    why: "dokit/state without a zod schema does not pull zod",
  },
  "lifecycle + websockets + state + callables": {
    // The full real-time stack (12,450 B measured). Its 12 KB target is passed: the heartbeat, broadcast's coalesce
    // key and the rateLimit check, the presence hook and keepsAwake(); coalesceBroadcasts, RateLimit and Presence are opt-in by import.
    // WebSockets split into one file per part adds 179 B (12,629 B measured); the yjs option 16 B (12,645 B measured);
    // WebSockets' count() kept between socket changes 151 B (12,796 B measured).
    // Public ids, closed connections dropped and destroy()'s refusal add about 360 B (13,158 B measured).
    // WebSockets' plug-in door (the presence, yjs and plugins options registered the same way, plug-in hooks as handler sets, binary claims ahead of onMessage) and connection slots (named, bounded, checked values in the attachment; slot.ts) add 425 B (13,584 B measured).
    // The rate limit, the heartbeat (its ping answer and sweep, a plug-in built by the option) and Cap'n Web registered through the plug-in door (its drops, accepted, closed and transport members) add 130 B (13,714 B measured).
    // With the presence helper above and the core's helpers in their engine folders: 13,723 B measured.
    // The inbound path read in one file (websockets/dispatch.ts), frame claims that declare needsWiring (the wake plan keeps their types), and plug-ins' connections tagged on accept for fan-out through the tag index add 80 B (13,664 B measured).
    // The plug-in door's new members, one inbound path with wiring declared per claim, the plug-in tags, the core's helpers
    // in their engine folders and the job engine's due readers together: 13,811 B measured.
    // The plug-in door's built(door) (slots and a protocol broadcast before attach, so the rate limit keeps wiring on demand; 14 B),
    // identity fields and connectFrame, and the state's sync as a plug-in of it (websockets/state-sync.ts): 13,947 B measured.
    ceiling: 13950,
    target: 13950,
    forbid: ["capnweb", "mcpSdk", "zod"],
    why: "the full real-time stack without Cap'n Web",
  },
  "lifecycle + schedule": {
    // croner is about 10 KB of it (one class, no tree-shaking), for IANA time zones with defined DST rules (docs/schedule.md);
    // the rest is the job engine, which refuses what cannot be stored or armed before writing it; the shared alarm's
    // due() (when a key's run is pending, which the Inspector shows for a heartbeat sweep) adds 23 B (20,285 B measured).
    // destroy()'s refusal adds about 50 B; the job runner's doors for Tasks (work after a drain, no drain mark, no job
    // events) and the shared alarm's schedule not written again when unchanged add 62 B (20,422 B measured).
    // The shared alarm's schedule written once per alarm run (a running hook's requests held until it ends), its
    // changes serialized, and a job matched by id as well add 222 B (20,644 B measured).
    // Connection slots' door in the core adds 34 B (20,678 B measured).
    // Job-engine keys' times read from their own tables (a `due` reader per claim; nothing stored for a host without
    // alarms of its own, a table read once for one with them) add 406 B (21,084 B measured).
    // Frame claims that declare needsWiring (the wake plan keeps their types instead of WebSockets naming them) add 18 B in the core (20,696 B measured).
    ceiling: 21096,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState", "dokitQueue"],
    why: "timed work pays for its cron library, and for nothing else",
  },
  "lifecycle + queue": {
    // The job table and runner shared with the Scheduler, reading due jobs 32 at a time, and the reference-table adoption; no cron; the shared alarm's due() (9,146 B measured).
    // destroy()'s refusal adds about 50 B; the job runner's doors for Tasks and the shared alarm's schedule not written
    // again when unchanged add 72 B (9,283 B measured). The shared alarm's schedule written once per alarm run, its
    // changes serialized, and a job matched by id as well add 231 B (9,514 B measured).
    // Connection slots' door in the core adds 34 B (9,548 B measured).
    // Job-engine keys' times read from their own tables add 391 B (9,939 B measured).
    // Frame claims that declare needsWiring (the wake plan keeps their types instead of WebSockets naming them) add 15 B in the core (9,563 B measured).
    // The plug-in door's new members, one inbound path with wiring declared per claim, the plug-in tags, the core's helpers
    // in their engine folders and the job engine's due readers together: 9,954 B measured.
    ceiling: 9960,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState", "dokitScheduler", "croner"],
    why: "background work does not pull the Scheduler or its cron library",
  },
  "lifecycle + sessions": {
    // The history store, compaction overlays, search, the change feed and live history (13,375 B measured);
    // @noble/hashes' SHA-256 for media content hashes, taken synchronously inside a write (docs/sessions.md,
    // "Dependencies"), adds 1,484 B (14,859 B measured).
    // The plug-in door's new members, one inbound path with wiring declared per claim, the plug-in tags, the core's helpers
    // in their engine folders and the job engine's due readers together: 14,876 B measured.
    // Reads that hold the path's ids and a typed array of sizes instead of one object per message add 198 B (15,074 B measured).
    // One function for a path row instead of two copies of it: 118 B less minified, 13 B more gzip (15,087 B measured).
    ceiling: 15090,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState", "dokitScheduler", "dokitQueue", "croner"],
    why: "conversation history pays for its hash, and for no other capability",
  },
  "lifecycle + mcp-client": {
    // Nearly all of it is the official MCP client SDK and the zod it imports; dokit's McpClients is about 11 KB minified.
    ceiling: 100 * KB,
    forbid: ["capnweb", "dokitState", "dokitQueue", "dokitScheduler"],
    why: "an MCP client pays for the client SDK, and for no other capability",
  },
  routing: {
    // The Worker-side router alone.
    ceiling: 1.5 * KB,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState"],
    why: "the Worker entry must stay tiny",
  },
  protocol: {
    // Frame literals and kebab().
    ceiling: 0.75 * KB,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState"],
    why: "shared by server and client",
  },
};

const cases = new Map([...DOKIT_CASES, ...REFERENCE_CASES].map((c) => [c.name, c]));
/** Cases the guard builds besides GUARDS' keys. */
const MCP_CASE = "mcp (one tool)";
const MCP_SDK_CASE = "MCP SDK handler alone (one tool)";
const built = new Map<string, Promise<BundleResult>>();

/**
 * @returns the case named `name`
 * @throws naming the case when cases.ts has none by that name (renamed or removed)
 */
function caseNamed(name: string): BundleCase {
  const c = cases.get(name);
  if (!c) throw new Error(missingCase(name));
  return c;
}

/** @returns the failure message naming a missing case */
function missingCase(name: string): string {
  return `cases.ts has no bundle case named "${name}": renamed or removed? Rename it here too`;
}

function build(name: string): Promise<BundleResult> {
  const c = caseNamed(name);
  const unexported = c.needs.filter((need) => !exported.includes(need));
  if (unexported.length) throw new Error(`bundle case "${name}" needs subpaths packages/dokit/entries.json does not export: ${unexported.join(", ")}`);
  let result = built.get(name);
  if (!result) built.set(name, (result = buildCase(c)));
  return result;
}

function describeSize(result: BundleResult): string {
  const top = topContributors(result, 5)
    .map(([input, bytes]) => `${input} ${bytes} B`)
    .join(", ");
  return `${result.name}: ${result.gzip} B gzip, ${result.minified} B minified (largest inputs, minified: ${top})`;
}

describe("bundle guard", () => {
  // Every case the guard checks exists under its name: a renamed case fails here, by name.
  it.each([...Object.keys(GUARDS), MCP_CASE, MCP_SDK_CASE])("finds the case %j", (name) => {
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
  // dokit/mcp with one tool vs the SDK handler alone), about 8.5 KB gzip.
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

  // yjs and dokit/yjs stay in the bundles that import dokit/yjs.
  describe("no other subpath pulls in yjs or dokit/yjs", () => {
    const YJS = "lifecycle + websockets + yjs";
    it("the yjs case carries dokit/yjs (the marker is real)", async () => {
      const { code } = await build(YJS);
      expect(code).toContain(FORBIDDEN.dokitYjs);
    });
    for (const name of [...Object.keys(GUARDS), MCP_CASE].filter((other) => other !== YJS)) {
      it(`${name} carries none of it`, async () => {
        const { code } = await build(name);
        for (const marker of ["yjs", "dokitYjs"] as const) expect(code.includes(FORBIDDEN[marker]), `${name} contains ${marker}`).toBe(false);
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
      // The same code, up to which short name the minifier gives which binding (it may break a tie differently,
      // and two bindings that swap names can move gzip by a byte or two).
      expect(Math.abs(imported.gzip - base.gzip), `${imported.gzip} vs ${base.gzip} B gzip`).toBeLessThanOrEqual(2);
      const names = (code: string) => code.replace(/(?<![\w$.])[A-Za-z_$][\w$]?(?![\w$])/g, "_");
      expect(names(imported.code)).toBe(names(base.code));
      expect(imported.code.includes(FORBIDDEN.dokitInspector)).toBe(false);
    });
    // 7,111 B measured; the Yjs section (stored size, editors and their names) adds 396 B (7,507 B measured).
    it("installed, it adds at most 7.5 KB gzip (the page is about 4.9 KB of that)", async () => {
      const [base, installed] = await Promise.all([build(BASE), build(INSTALLED)]);
      expect(installed.code, "the marker must be real").toContain(FORBIDDEN.dokitInspector);
      expect(installed.gzip - base.gzip, `${describeSize(installed)}; without it ${base.gzip} B gzip`).toBeLessThanOrEqual(7.5 * KB);
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
    const probe = (name: string, source: string) => buildCase({ name, needs: [], source });
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
