// Starting a bench worker: wrangler's startWorker, through its DevEnv so the user worker's own
// address is known. Clients connect to it directly by default, skipping wrangler's proxy worker
// (a second workerd process every frame would otherwise cross).

/** A started bench worker. */
export interface StartedWorker {
  /** The user worker's own address (`http://127.0.0.1:<port>/`). */
  direct: URL;
  /** The address of wrangler's proxy worker in front of it. */
  proxied: URL;
  dispose(): Promise<void>;
}

/**
 * Starts the worker of `config` on loopback, port 0, without persistence, inspector or watch.
 * @param config - the wrangler config's path
 */
export async function startBenchWorker(config: string): Promise<StartedWorker> {
  const { unstable_DevEnv } = await import("wrangler");
  const devEnv = new unstable_DevEnv();
  type Address = { protocol: string; hostname: string; port: string };
  const direct = new Promise<Address>((resolve) =>
    devEnv.on("reloadComplete", (event: { proxyData: { userWorkerUrl: Address } }) => resolve(event.proxyData.userWorkerUrl)),
  );
  // A worker that fails to start (a build error, an exception while its module loads) is reported
  // as an error event, and neither address would ever arrive: fail instead of waiting forever.
  const failed = new Promise<never>((_, reject) =>
    devEnv.on("error", (event: Error | { reason: string; cause?: unknown }) =>
      reject(event instanceof Error ? event : new Error(`${config}: ${event.reason}`, { cause: event.cause })),
    ),
  );
  const worker = await Promise.race([
    devEnv.startWorker({
      config,
      dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, persist: false, watch: false },
    }),
    failed,
  ]);
  let proxied: URL, address: Address;
  try {
    [proxied, address] = await Promise.race([Promise.all([worker.url, direct]), failed]);
  } catch (error) {
    await worker.dispose();
    throw error;
  }
  return {
    direct: new URL(`${address.protocol}//${address.hostname}:${address.port}/`),
    proxied,
    dispose: () => worker.dispose(),
  };
}
