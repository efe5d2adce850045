import type { LiveLog, ReportObject, RetainedStreams, SmallChunks } from "./objects";

declare global {
  interface Env {
    REPORT: DurableObjectNamespace<ReportObject>;
    SMALL: DurableObjectNamespace<SmallChunks>;
    RETAINED: DurableObjectNamespace<RetainedStreams>;
    LIVE_LOG: DurableObjectNamespace<LiveLog>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
