import type { LifecycleErrorCode } from "../lifecycle/errors";

/** The codes Observability (dokit/observability) throws with: the core's, and its own. */
export type ObservabilityErrorCode = LifecycleErrorCode;
