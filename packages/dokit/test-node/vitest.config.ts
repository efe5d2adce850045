// The Node-side project: real clients (dokit's and the official one) over
// real loopback sockets to a worker started by wrangler. No workers plugin.
import { defineConfig } from "vitest/config";

const here = (path: string) => new URL(path, import.meta.url).pathname;

export default defineConfig({
  resolve: { conditions: ["@dokit/source"] },
  test: {
    name: "node",
    environment: "node",
    include: [here("./*.test.ts")],
    globalSetup: [here("./global-setup.ts")],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
