import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  root: new URL(".", import.meta.url).pathname,
  plugins: [cloudflareTest({ wrangler: { configPath: new URL("./wrangler.jsonc", import.meta.url).pathname } })],
  // Resolve `dokit/*` to its TypeScript source: no build needed before testing.
  resolve: { conditions: ["@dokit/source"] },
  ssr: { resolve: { conditions: ["@dokit/source", "workerd", "worker", "module", "browser"] } },
  test: { name: "example-approvals", include: ["test/*.test.ts"] },
});
