// Starts the conformance worker once for the project (wrangler's startWorker
// on a loopback port) and provides its URL to the tests.
import { unstable_startWorker } from "wrangler";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** `http://127.0.0.1:<port>/` of the conformance worker. */
    conformanceUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const worker = await unstable_startWorker({
    config: new URL("./wrangler.jsonc", import.meta.url).pathname,
    dev: {
      server: { hostname: "127.0.0.1", port: 0 },
      inspector: false,
      persist: false,
      watch: false,
    },
  });
  const url = await worker.url;
  project.provide("conformanceUrl", url.toString());
  return async () => {
    await worker.dispose();
  };
}
