import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// verbose: false: the durability test aborts objects on purpose (ctx.abort), and workerd's
// verbose mode reports each abort as an uncaught exception with a native stack.
export default defineConfig({
  plugins: [cloudflareTest({ wrangler: { configPath: new URL("./wrangler.jsonc", import.meta.url).pathname }, verbose: false })],
  // `dokit/*` resolves to this package's source, so the reference's examples run with only their import paths changed.
  resolve: { alias: [{ find: /^dokit\/([\w-]+)$/, replacement: new URL("../../src/$1/index.ts", import.meta.url).pathname }] },
  test: { name: "streams", include: [new URL("./*.test.ts", import.meta.url).pathname] },
});
