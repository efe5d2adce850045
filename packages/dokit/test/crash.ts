// Crashing an object on purpose, as a failure would.
import { runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";

/**
 * Aborts an object's instance (`ctx.abort(reason)`): what it held in memory and any work in
 * flight are gone, its storage stays, and the next request builds a fresh instance. Checks
 * the abort happened, since workerd's report of it is kept out of the run's output
 * (deliberate-errors.ts drops reports of errors whose message starts with "test: ").
 * @param reason - the abort's message; starts with "test: "
 */
export async function crash(stub: DurableObjectStub, reason = "test: reset"): Promise<void> {
  const aborted = await runInDurableObject(stub, (_instance, ctx) => ctx.abort(reason)).then(
    () => "not aborted",
    (error: unknown) => String(error),
  );
  expect(aborted).toContain(reason);
}
