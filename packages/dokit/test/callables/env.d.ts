import type { CallBare, CallPassed, CallSeparate, CallWrapped } from "./objects";

declare global {
  interface Env {
    CALL_WRAPPED: DurableObjectNamespace<CallWrapped>;
    CALL_SEPARATE: DurableObjectNamespace<CallSeparate>;
    CALL_PASSED: DurableObjectNamespace<CallPassed>;
    CALL_BARE: DurableObjectNamespace<CallBare>;
  }
}
