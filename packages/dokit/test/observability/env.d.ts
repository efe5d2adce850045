import type { ObservedJobs, ObservedMcp, ObservedRoom, PlainRoom } from "./objects";

declare global {
  interface Env {
    OBSERVED_ROOM: DurableObjectNamespace<ObservedRoom>;
    PLAIN_ROOM: DurableObjectNamespace<PlainRoom>;
    OBSERVED_JOBS: DurableObjectNamespace<ObservedJobs>;
    OBSERVED_MCP: DurableObjectNamespace<ObservedMcp>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
