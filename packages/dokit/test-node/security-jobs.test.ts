// Scheduled work against hostile input, over real loopback: out-of-range schedule
// times sent as real HTTP requests to a worker started by wrangler
// (security-jobs.objects.ts).
import { describe, expect, inject, it } from "vitest";
import { eventually, fresh } from "./helpers";

const base = inject("workerUrl");
/** A run needs the alarm to fire; each check is two requests, so poll gently. */
const SLOW = { timeout: 10_000, interval: 50 };

type Jobs = { scheduleRows: number; queueRows: number; schedules: { id: string }[]; runs: { kind: string; entry: string }[]; alarm: number | null };

describe("schedule times the runtime cannot arm", () => {
  for (const when of ["1e300", "1e13", "8.64e15"]) {
    it(`refuses schedule(${when}) with INVALID_SCHEDULE, stores nothing, and a later schedule still fires`, async () => {
      const object = `${base}agents/jobs-host/${fresh("range")}`;
      const refused = await fetch(`${object}/schedule?when=${when}`, { method: "POST" });
      const body = (await refused.json()) as { ok: boolean; code?: string; message?: string };
      const jobs = async () => (await (await fetch(`${object}/jobs`)).json()) as Jobs;
      expect(await jobs()).toMatchObject({ scheduleRows: 0, schedules: [], alarm: null });
      expect(body).toMatchObject({ ok: false, code: "INVALID_SCHEDULE" });
      expect(body.message).toMatch(/^dokit: Scheduler: .*latest time an alarm can be set/);
      expect(refused.status).toBe(400);

      const accepted = await fetch(`${object}/schedule?when=0`, { method: "POST" });
      expect(await accepted.json()).toMatchObject({ ok: true });
      await eventually(async () => expect((await jobs()).runs).toEqual([{ kind: "tick", entry: JSON.stringify({ n: 0 }) }]), SLOW);
      expect(await jobs()).toMatchObject({ scheduleRows: 0, alarm: null });
    });
  }
});
