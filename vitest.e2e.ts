import { defineConfig } from "vitest/config";

// `pnpm test:e2e`: the `pnpm dev` worker in wrangler, driven by headless
// Chromium. Not part of `pnpm test` (it needs a browser: `.ci/run` installs one).
export default defineConfig({
  test: {
    name: "e2e",
    environment: "node",
    include: ["examples/e2e/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // A loaded 2-core CI machine can take over a second for a round trip plus a
    // React render: give every expect.poll ten seconds instead of vitest's one.
    expect: { poll: { timeout: 10_000 } },
  },
});
