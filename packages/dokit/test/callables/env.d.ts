import type { CallBare, CallSeparate, CallWrapped } from "./objects";

declare global {
  interface Env {
    CALL_WRAPPED: DurableObjectNamespace<CallWrapped>;
    CALL_SEPARATE: DurableObjectNamespace<CallSeparate>;
    CALL_BARE: DurableObjectNamespace<CallBare>;
  }
}
