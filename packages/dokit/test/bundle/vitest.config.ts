// The bundle guard: a plain Node project (no workers plugin). It builds minimal
// workers with esbuild in-process (build.ts) and checks size ceilings and code
// that must not be in a bundle.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "bundle",
    environment: "node",
    include: [new URL("./*.test.ts", import.meta.url).pathname],
    testTimeout: 60_000,
  },
});
