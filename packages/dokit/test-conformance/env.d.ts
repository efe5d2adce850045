import type { Everything, RetryOff, RetryTuned } from "./worker";

declare global {
  interface Env {
    EVERYTHING: DurableObjectNamespace<Everything>;
    RETRY_TUNED: DurableObjectNamespace<RetryTuned>;
    RETRY_OFF: DurableObjectNamespace<RetryOff>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
