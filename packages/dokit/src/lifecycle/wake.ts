import type { SocketOwner } from "./capability";
import type { Lifecycle } from "./lifecycle";

// Wiring on demand (docs/architecture.md, "The wake path"). An object built on a wake attaches its
// capabilities only when an event needs the dispatch table, if its class's first object showed
// that it may. These keys are internal: dokit's own capabilities carry them, a user's capability
// does not (and an object that uses one is always wired at once).

/**
 * Marks a capability that works before it is attached: `true`, or for the capability that takes
 * the sockets, the socket owner it will claim (the lifecycle hands it socket events meanwhile).
 * Such a capability claims no start hook, no observer and no connect frames, and each frame type
 * it claims says that its frame needs the object wired (`needsWiring`): the class's plan keeps
 * those types, and a frame of one wires a waiting object ({@link Waiting.frames}).
 */
export const WORKS_UNATTACHED = Symbol("dokit.worksUnattached");
/** Set by the lifecycle on a capability that waits to be attached: its {@link Waiting} handle. */
export const WAITING = Symbol("dokit.waiting");

/** What a capability that waits to be attached holds of the lifecycle it was used on. */
export interface Waiting {
  /** The lifecycle the capability was used on. */
  readonly lifecycle: Lifecycle;
  /** Attaches every capability that waits, in the order used (a no-op once they are). */
  wire(): void;
  /** The frame types whose claims need the object wired (the plan's `frames`): a frame of one calls `wire()` first. */
  readonly frames: WakePlan["frames"];
}

/** A capability as wiring on demand sees it. */
export interface Wakeable {
  [WORKS_UNATTACHED]?: SocketOwner | true;
  [WAITING]?: Waiting;
}

/** @returns the lifecycle `capability` is attached to (`attached`) or waits on, if any */
export function lifecycleOf(capability: object, attached: Lifecycle | undefined): Lifecycle | undefined {
  return attached ?? (capability as Wakeable)[WAITING]?.lifecycle;
}

/**
 * What a class's first object showed about its wiring, when a later object of the class may wait
 * to attach its capabilities until an event needs the dispatch table (see `use()`).
 */
export interface WakePlan {
  /** The classes of the capabilities the host used itself, in order (not those they used in turn). */
  readonly types: readonly unknown[];
  /** Where in that order the capability that takes the sockets is; -1 for none. */
  readonly socketsAt: number;
  /** The frame types the first object claimed (in a plan, every claim said it needs the object wired). */
  readonly frames: readonly string[];
}
