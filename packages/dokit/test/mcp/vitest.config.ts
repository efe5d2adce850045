import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// verbose: false: these tests refuse requests (a foreign Origin, a wrong content type) without reading
// their bodies, as McpHandler does, and workerd's verbose mode then reports the test worker's unread
// request stream as an uncaught exception with a native stack.
export default defineConfig({
  plugins: [cloudflareTest({ wrangler: { configPath: new URL("./wrangler.jsonc", import.meta.url).pathname }, verbose: false })],
  test: { name: "mcp", include: [new URL("./*.test.ts", import.meta.url).pathname] },
});
