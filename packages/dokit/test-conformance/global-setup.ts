// Starts the conformance worker once for the project and provides its URL to
// the tests.
import type { TestProject } from "vitest/node";
import { startLoopbackWorker } from "../test-node/loopback-worker";

declare module "vitest" {
  export interface ProvidedContext {
    /** `http://127.0.0.1:<port>/` of the conformance worker. */
    conformanceUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const worker = await startLoopbackWorker(new URL("./wrangler.jsonc", import.meta.url));
  project.provide("conformanceUrl", worker.url);
  return worker.stop;
}
