// Bundle guard (issue 9): minimal workers built with esbuild in-process, the
// same builds `pnpm bench` reports (bench/bundle.ts). Fails when a subpath
// grows past its ceiling or pulls in code it must not carry.
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
  FORBIDDEN: Record<"capnweb" | "mcpSdk" | "zod" | "dokitState", string>;
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
 * A ceiling is today's size plus a little headroom unless an issue sets a target;
 * raise one only with a measured reason in the commit.
 */
const GUARDS: Record<string, { ceiling: number; target?: number; forbid: Marker[]; why: string }> = {
  lifecycle: {
    // 3.1 KB today (lifecycle.ts ~5 KB minified, alarms ~1 KB, dispatch ~0.9 KB).
    ceiling: 3.5 * KB,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState"],
    why: "the core every object pays for",
  },
  "lifecycle + websockets": {
    // Target 6 KB (issue 3). 6.8 KB today: the target is MISSED, see the `target` test below;
    // the ceiling stops further growth until the gap is closed.
    ceiling: 7.2 * KB,
    target: 6 * KB,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState"],
    why: "DESIGN.md: dokit/websockets must not pull State, Cap'n Web, MCP or zod",
  },
  "lifecycle + callables": {
    // 4.5 KB today; Cap'n Web is opt-in (dokit/capnweb) and never reached from dokit/callables.
    ceiling: 5 * KB,
    forbid: ["capnweb", "mcpSdk", "zod", "dokitState"],
    why: "issue 5: a bundle that imports dokit/callables but never upgrades to Cap'n Web does not pay for it",
  },
  "lifecycle + state": {
    // 5.2 KB today. A function validator: no schema library.
    ceiling: 5.75 * KB,
    forbid: ["capnweb", "mcpSdk", "zod"],
    why: "issue 4: dokit/state without a zod schema does not pull zod",
  },
  "lifecycle + websockets + state + callables": {
    // Target 12 KB (issue 5); 8.7 KB today.
    ceiling: 12 * KB,
    target: 12 * KB,
    forbid: ["capnweb", "mcpSdk", "zod"],
    why: "issue 5: the full real-time stack without Cap'n Web",
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
const isExported = (c: BundleCase) => c.needs.every((need) => exported.includes(need));
const built = new Map<string, Promise<BundleResult>>();
function build(name: string): Promise<BundleResult> {
  const c = cases.get(name);
  if (!c) throw new Error(`no bundle case named ${name} in bench/bundle.ts`);
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
  for (const [name, guard] of Object.entries(GUARDS)) {
    const c = cases.get(name);
    const skip = !c || !isExported(c);
    describe(name, () => {
      it.skipIf(skip)(`stays under ${(guard.ceiling / KB).toFixed(2)} KB gzip (${guard.why})`, async () => {
        const result = await build(name);
        expect(result.gzip, describeSize(result)).toBeLessThanOrEqual(guard.ceiling);
      });
      for (const marker of guard.forbid) {
        it.skipIf(skip)(`does not contain ${marker} code`, async () => {
          const { code } = await build(name);
          expect(code.includes(FORBIDDEN[marker]), `found ${JSON.stringify(FORBIDDEN[marker])}`).toBe(false);
        });
      }
    });
  }

  // dokit/mcp: what dokit adds on top of the MCP SDK (issue 7: bundle of an object using
  // dokit/mcp with one tool vs the SDK handler alone). About 7 KB gzip when first measured.
  const mcp = cases.get("mcp (one tool)");
  describe("mcp (one tool)", () => {
    const skip = !mcp || !isExported(mcp);
    it.skipIf(skip)("adds at most 10 KB gzip to the MCP SDK's own handler", async () => {
      const [ours, sdk] = await Promise.all([build("mcp (one tool)"), build("MCP SDK handler alone (one tool)")]);
      expect(ours.gzip - sdk.gzip, `${describeSize(ours)}; SDK alone ${sdk.gzip} B gzip`).toBeLessThanOrEqual(10 * KB);
    });
    for (const marker of ["capnweb", "dokitState"] as const) {
      it.skipIf(skip)(`does not contain ${marker} code`, async () => {
        const { code } = await build("mcp (one tool)");
        expect(code.includes(FORBIDDEN[marker]), `found ${JSON.stringify(FORBIDDEN[marker])}`).toBe(false);
      });
    }
  });

  // Issue targets stricter than today's ceiling: `fails` while the target is missed, so the
  // gap stays visible in every run. When this starts failing, the target is met: drop `.fails`
  // and lower the ceiling above to the target.
  const missed = cases.get("lifecycle + websockets");
  it.skipIf(!missed || !isExported(missed)).fails("lifecycle + websockets meets the 6 KB gzip target of issue 3 (KNOWN MISS)", async () => {
    const result = await build("lifecycle + websockets");
    expect(result.gzip, describeSize(result)).toBeLessThanOrEqual(6 * KB);
  });

  // The markers must be real, or the must-not-contain checks above prove nothing.
  describe("markers are found where the code is", () => {
    const probe = (name: string, source: string) => lib.buildCase({ name, needs: [], source });
    it("capnweb", async () => {
      const { code } = await probe("capnweb", `import { newWebSocketRpcSession } from "capnweb"; export default { fetch: (r) => newWebSocketRpcSession(r.url) };`);
      expect(code).toContain(FORBIDDEN.capnweb);
    });
    it("the MCP SDK", async () => {
      const { code } = await build("MCP SDK handler alone (one tool)");
      expect(code).toContain(FORBIDDEN.mcpSdk);
    });
    it("zod", async () => {
      const { code } = await probe("zod", `import { z } from "zod"; export default { fetch: (r) => new Response(String(z.string().safeParse(r.url).success)) };`);
      expect(code).toContain(FORBIDDEN.zod);
    });
    it.skipIf(!exported.includes("state"))("dokit's State", async () => {
      const { code } = await build("lifecycle + state");
      expect(code).toContain(FORBIDDEN.dokitState);
    });
  });
});
