import type { DokitAgent, RefAgent } from "./worker";

declare global {
  interface Env {
    RefAgent: DurableObjectNamespace<RefAgent>;
    DokitAgent: DurableObjectNamespace<DokitAgent>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
