import type { LiveLog, ReportObject, RetainedStreams, SmallChunks } from "./objects";
import type { ReportObject as ReferenceReport } from "./reference.objects";

declare global {
  interface Env {
    REPORT: DurableObjectNamespace<ReportObject>;
    SMALL: DurableObjectNamespace<SmallChunks>;
    RETAINED: DurableObjectNamespace<RetainedStreams>;
    LIVE_LOG: DurableObjectNamespace<LiveLog>;
    REFERENCE: DurableObjectNamespace<ReferenceReport>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
