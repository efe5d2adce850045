import { env, exports } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";

// The Worker's own fetch (typed by GlobalProps in env.d.ts): requests go through its routing.
const worker = exports.default;
const post = (path: string, body: unknown) => worker.fetch(`http://example.com${path}`, { method: "POST", body: JSON.stringify(body) });
const get = async (path: string) => (await worker.fetch(`http://example.com${path}`)).json() as Promise<Record<string, unknown>>;

describe("approvals: an expense is a Task run that waits for a decision and a cooling-off", () => {
  it("records, waits for the decision across an eviction, cools off, pays once", { timeout: 30_000 }, async () => {
    const { runId } = (await (await post("/expenses", { amount: 42, note: "team lunch" })).json()) as { runId: string };
    // Waiting for the decision: nothing in memory; the object is evicted meanwhile.
    for (let i = 0; i < 100 && (await get(`/expenses/${runId}`)).reason !== "event"; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await get(`/expenses/${runId}`)).toMatchObject({ state: "waiting", reason: "event", statusMessage: "waiting for a manager's decision" });
    await evictDurableObject(env.Approvals.getByName("demo"));
    expect(await (await post(`/expenses/${runId}/decide`, { approved: true, by: "ann" })).json()).toBe(true);
    const settled = await get(`/expenses/${runId}?wait=20`);
    expect(settled).toMatchObject({ state: "completed", result: { approved: true, by: "ann" } });
    expect((settled.result as { paidAt: number }).paidAt).toBeTypeOf("number");
    // A settled run takes no more decisions.
    expect((await post(`/expenses/${runId}/decide`, { approved: false })).status).toBe(404);
  });

  it("ends a rejected expense without paying it; refuses a malformed one", async () => {
    const { runId } = (await (await post("/expenses", { amount: 7, note: "taxi" })).json()) as { runId: string };
    expect(await (await post(`/expenses/${runId}/decide`, { approved: false, by: "bob" })).json()).toBe(true);
    expect(await get(`/expenses/${runId}?wait=10`)).toMatchObject({ state: "completed", result: { approved: false, by: "bob" } });
    expect((await post("/expenses", { amount: -1, note: "x" })).status).toBe(400);
    expect((await post("/expenses", "not an object")).status).toBe(400);
    const list = (await (await worker.fetch("http://example.com/expenses")).json()) as { runId: string }[];
    expect(list.map((run) => run.runId)).toContain(runId);
  });

  it("serves its page", async () => {
    const response = await worker.fetch("http://example.com/");
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await response.text()).toContain("Expense approvals");
  });
});
