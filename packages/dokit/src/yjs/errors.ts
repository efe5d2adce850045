import type { LifecycleErrorCode } from "../lifecycle/errors";

/** The codes YjsDocument (dokit/yjs) throws with: the core's, and its own. */
export type YjsErrorCode = LifecycleErrorCode | "INVALID_ARGUMENT";
