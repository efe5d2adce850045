import { defineConfig } from "vitest/config";

// `pnpm test:e2e`: the `pnpm dev` worker in wrangler, driven by headless
// Chromium. Not part of `pnpm test` (it needs a browser: `.ci/run` installs one).
export default defineConfig({
  test: {
    name: "e2e",
    environment: "node",
    include: ["examples/e2e/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
