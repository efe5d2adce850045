import type { LifecycleErrorCode } from "../lifecycle/errors";

/** The codes Presence (dokit/presence) throws with: the core's, and its own. */
export type PresenceErrorCode = LifecycleErrorCode | "INVALID_ARGUMENT" | "PRESENCE_REJECTED";
