// Sizes a queued item cannot have: refused before anything is stored.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { DokitError } from "../../src/lifecycle";
import type { Queue } from "../../src/queue";
import { fresh } from "../helpers";
const MAX_JOB_BYTES = 2_000_000;

const work = (label: string) => env.WORK.get(env.WORK.idFromName(fresh(label)));

describe("payload size", () => {
  it(`refuses a payload that would make the row larger than SQLite takes (${MAX_JOB_BYTES} bytes), storing nothing; the queue still runs`, async () => {
    const stub = work("big");
    await runInDurableObject(stub, async (instance, ctx) => {
      await instance.lifecycle.start();
      const queue = instance.queue as unknown as Queue;
      const id = "y".repeat(256);
      const fits = "x".repeat(MAX_JOB_BYTES - 20_000);
      expect(await queue.push("step", fits, { id })).toMatchObject({ id });
      for (const payload of ["x".repeat(MAX_JOB_BYTES), { text: "€".repeat(MAX_JOB_BYTES / 3) }]) {
        const error = await queue.push("step", payload).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DokitError);
        expect(error).toMatchObject({ code: "INVALID_PAYLOAD", message: expect.stringMatching(/^dokit: Queue: the job takes \d+ bytes .* 2 MB/) });
        // Replacing an item by id with an oversized payload keeps the item as it was.
        expect(await queue.push("step", payload, { id }).catch((e: unknown) => e)).toMatchObject({ code: "INVALID_PAYLOAD" });
      }
      expect((await queue.list()).map((item) => [item.id, item.payload])).toEqual([[id, fits]]);
      expect(ctx.storage.sql.exec("SELECT count(*) AS n FROM dokit_queue").one().n).toBe(1);
    });
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect(await stub.pending()).toEqual([]));
  });
});
