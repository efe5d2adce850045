// Starts a worker with wrangler on a free loopback port, as the Node-side
// projects' global setups do: real sockets to 127.0.0.1, no inspector, no
// persistence, no file watching.
import { unstable_startWorker } from "wrangler";

/**
 * @param config - the wrangler config's URL
 * @param persist - a directory to keep the objects' storage in (a restart on it finds it again); none by default
 * @returns the worker's `http://127.0.0.1:<port>/` and a function that stops it
 */
export async function startLoopbackWorker(config: URL, persist?: string): Promise<{ url: string; stop: () => Promise<void> }> {
  // wrangler prints a line per request and the worker's own console: negative tests
  // make the worker log on purpose, so a passing run would be a wall of red lines.
  // Quiet by default; DOKIT_WORKER_LOGS=1 shows them (for a failing test).
  process.env.WRANGLER_LOG ??= process.env.DOKIT_WORKER_LOGS === "1" ? "log" : "none";
  const worker = await unstable_startWorker({
    config: config.pathname,
    dev: {
      server: { hostname: "127.0.0.1", port: 0 },
      inspector: false,
      persist: persist ?? false,
      watch: false,
    },
  });
  const url = await worker.url;
  return { url: url.toString(), stop: () => worker.dispose() };
}
