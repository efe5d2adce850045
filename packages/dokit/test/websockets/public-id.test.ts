// The public id (src/websockets/public-id.ts): what dokit shows others of a connection id.
import { describe, expect, it } from "vitest";
import { derivePublicId, randomPublicId } from "../../src/websockets/public-id";
import { publicIdOf } from "../public-id";

describe("public ids", () => {
  it("derives 22 base64url characters from SHA-256, the same for the same id, never the id or a part of it", async () => {
    for (const id of [crypto.randomUUID(), "a", "é".repeat(100), "x".repeat(252)]) {
      const derived = await derivePublicId(id);
      expect(derived).toBe(publicIdOf(id));
      expect(derived).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(await derivePublicId(id)).toBe(derived);
      expect(await derivePublicId(`${id}x`)).not.toBe(derived);
      expect(derived).not.toContain(id.slice(0, 8));
    }
  });

  it("makes a random one of the same form for a connection opened before dokit kept one", () => {
    const ids = new Set(Array.from({ length: 100 }, () => randomPublicId()));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});
