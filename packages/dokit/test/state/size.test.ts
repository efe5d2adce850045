// State values past SQLite's 2 MB row limit: stored across rows, read back whole
// after a real eviction, replaced atomically, refused over MAX_STATE_BYTES with
// the previous value kept, and values stored one per row still loading.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_STATE_BYTES } from "../../src/state";
import { hibernate } from "../../src/testing";
import { captureConsole } from "../logs";
import { fresh } from "../helpers";
import { PlainStore } from "./objects";

const plain = () => env.STATE_PLAIN.get(env.STATE_PLAIN.idFromName(fresh("size")));
const MiB = 1024 * 1024;

/** A deterministic value of about `bytes` UTF-8 bytes as JSON, with two- and four-byte characters throughout. */
function big(bytes: number, tag: string): { tag: string; rows: string[] } {
  const row = `${tag}:é😀-`.padEnd(1000, "abcdefghij");
  return { tag, rows: Array.from({ length: Math.floor(bytes / 1010) }, (_, i) => `${i}:${row}`) };
}

/** @returns the State table's rows (id, UTF-8 length of the value) */
function rows(ctx: DurableObjectState): { id: string; bytes: number }[] {
  return ctx.storage.sql
    .exec<{ id: string; bytes: number }>("SELECT id, length(CAST(value AS BLOB)) AS bytes FROM dokit_state ORDER BY id")
    .toArray();
}

/** @returns a short fingerprint of a value: its JSON's length and a sample of it */
const fingerprint = (value: unknown) => {
  const json = JSON.stringify(value);
  return `${json.length}:${json.slice(0, 40)}:${json.slice(-40)}`;
};

describe("State values over one SQLite row", () => {
  it("stores a 5 MB value across rows of at most 1 MiB and reads it back whole after an eviction", async () => {
    const stub = plain();
    const expected = await runInDurableObject(stub, (instance: PlainStore, ctx) => {
      const value = big(5 * MiB, "five");
      instance.write(value);
      const stored = rows(ctx);
      expect(stored.length).toBeGreaterThan(5);
      expect(stored.every((row) => row.bytes <= MiB)).toBe(true);
      return fingerprint(value);
    });
    await hibernate(stub);
    const afterWake = await runInDurableObject(stub, (instance: PlainStore) => {
      const value = instance.read() as ReturnType<typeof big>;
      expect(value.rows.every((row, i) => row.startsWith(`${i}:five:é😀-`))).toBe(true);
      return fingerprint(value);
    });
    expect(afterWake).toBe(expected);
    // A fresh instance reads the same rows.
    const fresh = await runInDurableObject(stub, (_instance, ctx) => fingerprint(new PlainStore(ctx, env).read()));
    expect(fresh).toBe(expected);
  });

  it("never cuts a part inside a surrogate pair or a multi-byte character", async () => {
    const stub = plain();
    // Four-byte characters at every offset around each 1 MiB cut.
    const values = [0, 1, 2, 3].map((shift) => "x".repeat(MiB - 3 + shift) + "😀é".repeat(MiB / 2));
    for (const value of values) {
      await runInDurableObject(stub, (instance: PlainStore) => void instance.write(value));
      await hibernate(stub);
      const back = await runInDurableObject(stub, (instance: PlainStore) => instance.read() as string);
      expect(back === value, `round trip of a value shifted by ${values.indexOf(value)}`).toBe(true);
    }
  });

  it(`refuses a 40 MB value with STATE_TOO_LARGE naming the limit, keeping the previous value`, async () => {
    const stub = plain();
    const before = await runInDurableObject(stub, (instance: PlainStore) => {
      const value = big(3 * MiB, "before");
      instance.write(value);
      return fingerprint(value);
    });
    await runInDurableObject(stub, (instance: PlainStore, ctx) => {
      const stored = rows(ctx);
      const outcome = instance.tryWrite("x".repeat(40_000_000));
      expect(outcome).toMatchObject({ ok: false, code: "STATE_TOO_LARGE" });
      expect((outcome as { message: string }).message).toMatch(
        /^dokit: the state is 40000002 bytes as JSON; State holds at most 33553408 bytes \(32 MiB, the WebSocket message limit, less 1 KiB/,
      );
      expect(fingerprint(instance.read())).toBe(before);
      expect(rows(ctx)).toEqual(stored);
    });
    await hibernate(stub);
    expect(await runInDurableObject(stub, (instance: PlainStore) => fingerprint(instance.read()))).toBe(before);
  });

  it("stores a value of exactly MAX_STATE_BYTES and refuses one byte more (UTF-8 bytes, not characters)", async () => {
    const stub = plain();
    await runInDurableObject(stub, (instance: PlainStore) => {
      // JSON adds two quote bytes; "é" is two UTF-8 bytes but one UTF-16 unit.
      expect(instance.tryWrite("é".repeat((MAX_STATE_BYTES - 2) / 2))).toMatchObject({ ok: true });
      const over = instance.tryWrite("é".repeat((MAX_STATE_BYTES - 2) / 2) + "x");
      expect(over).toMatchObject({ ok: false, code: "STATE_TOO_LARGE" });
      expect((over as { message: string }).message).toMatch(`the state is ${MAX_STATE_BYTES + 1} bytes as JSON`);
    });
    await hibernate(stub);
    expect(await runInDurableObject(stub, (instance: PlainStore) => (instance.read() as string).length)).toBe((MAX_STATE_BYTES - 2) / 2);
  });

  it("leaves the previous value whole when a write fails part way", async () => {
    const stub = plain();
    const before = await runInDurableObject(stub, (instance: PlainStore, ctx) => {
      const value = big(4 * MiB, "old");
      instance.write(value);
      // The storage fails on the fourth part row of the next write (as a full disk would).
      ctx.storage.sql.exec(
        "CREATE TRIGGER fail_part BEFORE INSERT ON dokit_state WHEN NEW.id = 'state:0003' BEGIN SELECT RAISE(ABORT, 'disk full'); END",
      );
      return fingerprint(value);
    });
    await runInDurableObject(stub, (instance: PlainStore, ctx) => {
      const stored = rows(ctx);
      expect(() => instance.write(big(6 * MiB, "new"))).toThrow(/disk full/);
      expect(rows(ctx)).toEqual(stored);
      expect(fingerprint(instance.read())).toBe(before);
      ctx.storage.sql.exec("DROP TRIGGER fail_part");
    });
    await hibernate(stub);
    expect(await runInDurableObject(stub, (instance: PlainStore) => fingerprint(instance.read()))).toBe(before);
  });

  it("leaves no stale parts when a value is replaced by a smaller one, even before the first read after a wake", async () => {
    const stub = plain();
    const smaller = big(2.5 * MiB, "smaller");
    await runInDurableObject(stub, (instance: PlainStore) => void instance.write(big(6 * MiB, "larger")));
    await runInDurableObject(stub, (instance: PlainStore, ctx) => {
      instance.write(smaller);
      expect(rows(ctx).map((row) => row.id)).toEqual(["state", "state:0000", "state:0001", "state:0002"]);
    });
    await hibernate(stub);
    expect(await runInDurableObject(stub, (instance: PlainStore) => fingerprint(instance.read()))).toBe(fingerprint(smaller));
    // A large value, an eviction, then a small one written before anything reads the state.
    await runInDurableObject(stub, (instance: PlainStore) => void instance.write(big(3 * MiB, "large-again")));
    await hibernate(stub);
    await runInDurableObject(stub, (instance: PlainStore, ctx) => {
      instance.write({ small: true });
      expect(rows(ctx)).toEqual([{ id: "state", bytes: 14 }]);
    });
    await hibernate(stub);
    expect(await stub.read()).toEqual({ small: true });
  });

  it("loads a value stored one per row (up to 2 MiB) and the next write splits it", async () => {
    const stub = plain();
    const value = "y".repeat(2 * MiB - 2);
    await runInDurableObject(stub, (_instance, ctx) => {
      ctx.storage.sql.exec("CREATE TABLE dokit_state (id TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)");
      ctx.storage.sql.exec("INSERT INTO dokit_state (id, value) VALUES ('state', ?)", JSON.stringify(value));
    });
    await hibernate(stub);
    await runInDurableObject(stub, (instance: PlainStore, ctx) => {
      expect(instance.read() === value).toBe(true);
      instance.write(`${value}z`);
      expect(rows(ctx).map((row) => row.id)).toEqual(["state", "state:0000", "state:0001", "state:0002"]);
    });
    await hibernate(stub);
    expect(await runInDurableObject(stub, (instance: PlainStore) => instance.read() === `${value}z`)).toBe(true);
  });

  it("falls back to initialState with a warning when parts are missing, and the next write repairs it", async () => {
    const logs = captureConsole();
    const stub = plain();
    await runInDurableObject(stub, (instance: PlainStore, ctx) => {
      instance.write(big(3 * MiB, "parts"));
      ctx.storage.sql.exec("DELETE FROM dokit_state WHERE id = 'state:0001'");
    });
    await hibernate(stub);
    expect(await stub.read()).toEqual({ seeded: true, at: "initial" });
    expect(logs.warn.splice(0)).toEqual([expect.stringMatching(/^dokit: the stored state in dokit_state of .* is corrupt \(the marker names 4 parts/)]);
    expect(await stub.write("repaired")).toBe("repaired");
    await runInDurableObject(stub, (_instance, ctx) => expect(rows(ctx)).toEqual([{ id: "state", bytes: 10 }]));
  });
});
