// Starts the scenario worker once for the whole Node project and provides its
// URL to the tests.
import type { TestProject } from "vitest/node";
import { startLoopbackWorker } from "./loopback-worker";

declare module "vitest" {
  export interface ProvidedContext {
    /** `http://127.0.0.1:<port>/` of the scenario worker. */
    workerUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const worker = await startLoopbackWorker(new URL("./wrangler.jsonc", import.meta.url));
  project.provide("workerUrl", worker.url);
  return worker.stop;
}
