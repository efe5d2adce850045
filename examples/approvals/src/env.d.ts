import type { Approvals } from "./approvals";

declare global {
  interface Env {
    Approvals: DurableObjectNamespace<Approvals>;
  }
}
