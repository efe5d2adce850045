// The repository's own scripts (bootstrap.sh), run as a newcomer's shell runs them.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "scripts",
    environment: "node",
    include: [new URL("./*.test.ts", import.meta.url).pathname],
    testTimeout: 60_000,
  },
});
