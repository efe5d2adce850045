import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [cloudflareTest({ wrangler: { configPath: new URL("./wrangler.jsonc", import.meta.url).pathname } })],
  test: {
    name: "rooms",
    include: [new URL("./*.test.ts", import.meta.url).pathname],
    testTimeout: 60_000,
    // Objects crashed and faults injected on purpose: workerd's reports of them stay out of the output.
    globalSetup: [new URL("../deliberate-errors.ts", import.meta.url).pathname],
  },
});
