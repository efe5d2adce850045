import type { HangingTimers, KeepingTimers, Timers, UntypedTimers } from "./objects";

declare global {
  interface Env {
    TIMERS: DurableObjectNamespace<Timers>;
    KEEPING: DurableObjectNamespace<KeepingTimers>;
    HANGING: DurableObjectNamespace<HangingTimers>;
    UNTYPED: DurableObjectNamespace<UntypedTimers>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
