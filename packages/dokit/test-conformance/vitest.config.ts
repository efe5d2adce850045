// The conformance project: the official MCP conformance suite's CLI and the
// official SDK client, over real loopback sockets, against a worker started
// by wrangler. No workers plugin.
import { defineConfig } from "vitest/config";

const here = (path: string) => new URL(path, import.meta.url).pathname;

export default defineConfig({
  resolve: { conditions: ["@dokit/source"] },
  test: {
    name: "conformance",
    environment: "node",
    include: [here("./*.test.ts")],
    globalSetup: [here("./global-setup.ts")],
    testTimeout: 20_000,
    hookTimeout: 240_000,
  },
});
