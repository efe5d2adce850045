import { defineConfig } from "vitest/config";

// The root test config (vitest 4+ uses test.projects instead of workspace files).
export default defineConfig({
  test: {
    projects: [
      "packages/dokit/test/*/vitest.config.ts",
      "packages/dokit/test-node/vitest.config.ts",
      "packages/dokit/test-conformance/vitest.config.ts",
      "examples/*/vitest.config.ts",
      "scripts/vitest.config.ts",
    ],
  },
});
