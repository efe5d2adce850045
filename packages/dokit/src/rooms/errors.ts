import type { LifecycleErrorCode } from "../lifecycle/errors";

/**
 * The codes dokit/rooms throws with: the core's, and its own. `ROOM_PUBLISH_FAILED`: the sequencer
 * did not take a message after every retry; `NO_BINDING`: an option names no Durable Object binding.
 */
export type RoomsErrorCode = LifecycleErrorCode | "ROOM_PUBLISH_FAILED" | "NO_BINDING";
