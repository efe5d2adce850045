import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

/**
 * Drops one warning Vite prints the first time it loads a file without a cache (as on CI): `ai` depends on
 * @workflow/serde, whose published source map names a `src/` folder the package does not ship. The map is the
 * package's, not ours; every other message goes through.
 */
function dropForeignSourcemapWarnings<T extends { warnOnce(message: string, options?: unknown): void }>(logger: T): T {
  const warnOnce = logger.warnOnce.bind(logger);
  logger.warnOnce = (message, options) => {
    if (!/^Sourcemap for ".*\/node_modules\/.*" points to missing source files$/.test(message)) warnOnce(message, options);
  };
  return logger;
}

export default defineConfig({
  plugins: [
    cloudflareTest({ wrangler: { configPath: new URL("./wrangler.jsonc", import.meta.url).pathname } }),
    { name: "dokit:quiet-foreign-sourcemaps", configResolved: (config) => void dropForeignSourcemapWarnings(config.logger) },
  ],
  test: { name: "sessions", include: [new URL("./*.test.ts", import.meta.url).pathname] },
});
