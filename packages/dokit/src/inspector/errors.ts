import type { LifecycleErrorCode } from "../lifecycle/errors";

/** The codes the Inspector (dokit/inspector) throws with: the core's, and its own. */
export type InspectorErrorCode = LifecycleErrorCode;
