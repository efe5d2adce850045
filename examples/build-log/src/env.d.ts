import type { BuildLog } from "./build-log";

declare global {
  interface Env {
    BuildLog: DurableObjectNamespace<BuildLog>;
  }
}
