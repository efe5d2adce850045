import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// verbose: false: these tests abort objects on purpose (ctx.abort mid-run), and workerd's
// verbose mode reports each abort as an uncaught exception with a native stack.
export default defineConfig({
  plugins: [cloudflareTest({ wrangler: { configPath: new URL("./wrangler.jsonc", import.meta.url).pathname }, verbose: false })],
  test: { name: "tasks", include: [new URL("./*.test.ts", import.meta.url).pathname] },
});
