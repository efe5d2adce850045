// The repository's own scripts (bootstrap.sh), run as a newcomer's shell runs them,
// and the docs' examples, checked as a reader pastes them into the quick start.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "scripts",
    environment: "node",
    include: [new URL("./*.test.ts", import.meta.url).pathname],
    testTimeout: 60_000,
  },
});
