import type { AlarmHost, DelegatingHost, FlakyStart, PlainHost } from "./objects";

declare global {
  interface Env {
    PLAIN: DurableObjectNamespace<PlainHost>;
    DELEGATING: DurableObjectNamespace<DelegatingHost>;
    FLAKY: DurableObjectNamespace<FlakyStart>;
    ALARMED: DurableObjectNamespace<AlarmHost>;
    MY_AGENT: DurableObjectNamespace<PlainHost>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
