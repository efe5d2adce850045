import type { CrashingWork, ScheduledWork, Work } from "./objects";

declare global {
  interface Env {
    WORK: DurableObjectNamespace<Work>;
    CRASHING: DurableObjectNamespace<CrashingWork>;
    BOTH: DurableObjectNamespace<ScheduledWork>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
