import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// verbose: false: a test aborts the object on purpose (ctx.abort mid-reply), and workerd's verbose
// mode reports each abort as an uncaught exception with a native stack.
export default defineConfig({
  root: new URL(".", import.meta.url).pathname,
  plugins: [cloudflareTest({ wrangler: { configPath: new URL("./wrangler.jsonc", import.meta.url).pathname }, verbose: false })],
  // Resolve `dokit/*` to its TypeScript source: no build needed before testing.
  resolve: { conditions: ["@dokit/source"] },
  ssr: { resolve: { conditions: ["@dokit/source", "workerd", "worker", "module", "browser"] } },
  test: {
    name: "example-agent-chat",
    include: ["test/*.test.ts"],
    // Bundles page/ into src/page-bundle.js, which the Worker serves.
    globalSetup: ["../build-pages.ts"],
  },
});
