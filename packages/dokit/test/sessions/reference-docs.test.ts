import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fresh } from "../helpers";

describe("the reference's documentation", () => {
  it("runs with only its import paths changed", async () => {
    const stub = env.REFERENCE_DOCS.get(env.REFERENCE_DOCS.idFromName(fresh("docs")));
    const out = JSON.parse(await stub.runAll()) as Record<string, unknown>;
    expect(out.inserted).toBe(true);
    expect(out.branch).toEqual([expect.any(String), "alt"]);
    expect(out.alternatives).toEqual(["client-1", "alt"]);
    expect((out.copied as string[]).length).toBe((out.history as string[]).length);
    expect(out.search).toBe(0);
    expect(out.mirrored).toEqual(["after-mirror"]);
    expect(out.cached).toBe(true);
    expect(out.seen).toContain("projection:after-mirror");
  });
});
