// The public id's hash (src/websockets/public-id.ts) against the runtime's SHA-256.
import { describe, expect, it } from "vitest";
import { derivePublicId, sha256 } from "../../src/websockets/public-id";

const hex = (bytes: ArrayBuffer | Uint8Array) => [...new Uint8Array(bytes)].map((byte) => byte.toString(16).padStart(2, "0")).join("");

describe("public ids", () => {
  it("hashes as crypto.subtle's SHA-256 does, across block boundaries and multi-byte text", async () => {
    const texts = ["", "abc", "a".repeat(55), "a".repeat(56), "a".repeat(63), "a".repeat(64), "é".repeat(300), crypto.randomUUID(), "x".repeat(1000)];
    for (const text of texts) {
      const bytes = new TextEncoder().encode(text);
      expect(hex(sha256(bytes)), `${text.length} characters`).toBe(hex(await crypto.subtle.digest("SHA-256", bytes)));
    }
  });

  it("derives 22 base64url characters, the same for the same id, never the id or a part of it", async () => {
    const id = crypto.randomUUID();
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`dokit public id\u0000${id}`)));
    const expected = btoa(String.fromCharCode(...digest.subarray(0, 16))).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
    expect(derivePublicId(id)).toBe(expected);
    expect(derivePublicId(id)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(derivePublicId(id)).toBe(derivePublicId(id));
    expect(derivePublicId(`${id}x`)).not.toBe(derivePublicId(id));
    expect(derivePublicId(id)).not.toContain(id.slice(0, 8));
  });
});
