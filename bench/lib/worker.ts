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
  const worker = await devEnv.startWorker({
    config,
    dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, persist: false, watch: false },
  });
  const proxied = await worker.url;
  const address = await direct;
  return {
    direct: new URL(`${address.protocol}//${address.hostname}:${address.port}/`),
    proxied,
    dispose: () => worker.dispose(),
  };
}
