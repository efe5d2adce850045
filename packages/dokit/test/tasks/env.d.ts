import type { Crashes, Deploys, Flows, Mixed, ReportObject } from "./objects";

declare global {
  interface Env {
    FLOWS: DurableObjectNamespace<Flows>;
    REPORTS: DurableObjectNamespace<ReportObject>;
    DEPLOYS: DurableObjectNamespace<Deploys>;
    MIXED: DurableObjectNamespace<Mixed>;
    CRASHES: DurableObjectNamespace<Crashes>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
