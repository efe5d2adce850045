// Starting a bench worker: wrangler's startWorker, through its DevEnv so the user worker's own
// address is known. Clients connect to it directly by default, skipping wrangler's proxy worker
// (a second workerd process every frame would otherwise cross).

/** A started bench worker. */
export interface StartedWorker {
  /** The user worker's own address (`http://127.0.0.1:<port>/`). */
  direct: URL;
  /** The address of wrangler's proxy worker in front of it. */
  proxied: URL;
  /** The DevTools address of wrangler's inspector proxy (`http://127.0.0.1:<port>/`), with `inspector: true` only. */
  inspector: URL | undefined;
  dispose(): Promise<void>;
}

/** Options of {@link startBenchWorker}. */
export interface BenchWorkerOptions {
  /** Start workerd's inspector (on loopback, a free port), for the heap measure (lib/heap.ts). Off by default. */
  inspector?: boolean;
  /** V8 flags for this worker's workerd (`MINIFLARE_WORKERD_V8_FLAGS`, added to any set in the environment), e.g. `--expose-gc`. */
  v8Flags?: string;
  /** wrangler's dev registry folder: sessions sharing one bind each other's services and Durable Objects (`script_name`). None by default. */
  registry?: string;
  /** Compatibility flags added to the config's, e.g. `precise_timers`. None by default. */
  compatibilityFlags?: string[];
}

/**
 * Starts the worker of `config` on loopback, port 0, without persistence, inspector or watch.
 * @param config - the wrangler config's path
 * @param options - an inspector and V8 flags, for the heap measure
 */
export async function startBenchWorker(config: string, options: BenchWorkerOptions = {}): Promise<StartedWorker> {
  // The workers import dokit by its public subpaths; the package's `@dokit/source` condition makes
  // them the working tree's source (no build needed), wrangler's own conditions after it.
  process.env.WRANGLER_BUILD_CONDITIONS ??= "@dokit/source,workerd,worker,browser";
  const { unstable_DevEnv, unstable_readConfig } = await import("wrangler");
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
  // Miniflare reads the flags when it spawns workerd, during the start: set for it, then restored.
  const flags = process.env.MINIFLARE_WORKERD_V8_FLAGS;
  if (options.v8Flags) process.env.MINIFLARE_WORKERD_V8_FLAGS = [flags, options.v8Flags].filter(Boolean).join(" ");
  let worker: Awaited<ReturnType<typeof devEnv.startWorker>>;
  let proxied: URL, address: Address, inspector: URL | undefined;
  try {
    worker = await Promise.race([
      devEnv.startWorker({
        config,
        // An input's flags replace the config's: the config's are read and kept.
        ...(options.compatibilityFlags && { compatibilityFlags: [...(unstable_readConfig({ config }).compatibility_flags ?? []), ...options.compatibilityFlags] }),
        dev: {
          server: { hostname: "127.0.0.1", port: 0 },
          inspector: options.inspector ? { hostname: "127.0.0.1", port: 0 } : false,
          persist: false,
          watch: false,
          ...(options.registry && { registry: options.registry }),
        },
      }),
      failed,
    ]);
    try {
      [proxied, address, inspector] = await Promise.race([Promise.all([worker.url, direct, worker.inspectorUrl]), failed]);
    } catch (error) {
      await worker.dispose();
      throw error;
    }
  } finally {
    if (flags === undefined) delete process.env.MINIFLARE_WORKERD_V8_FLAGS;
    else process.env.MINIFLARE_WORKERD_V8_FLAGS = flags;
  }
  if (options.inspector && !inspector) {
    await worker.dispose();
    throw new Error(`${config}: wrangler started no inspector`);
  }
  return {
    direct: new URL(`${address.protocol}//${address.hostname}:${address.port}/`),
    proxied,
    inspector: options.inspector ? inspector : undefined,
    dispose: () => worker.dispose(),
  };
}
