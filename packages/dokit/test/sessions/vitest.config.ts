import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [cloudflareTest({ wrangler: { configPath: new URL("./wrangler.jsonc", import.meta.url).pathname } })],
  test: { name: "sessions", include: [new URL("./*.test.ts", import.meta.url).pathname] },
});
