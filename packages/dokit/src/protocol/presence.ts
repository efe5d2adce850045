// Presence frames, both ways (dokit's own, not the Agents protocol's; docs/protocol.md,
// docs/presence.md). Shared by server and client; holds no behaviour.

/** Presence, both ways (dokit's, not the Agents protocol's; docs/protocol.md). */
export const PRESENCE = "dokit_presence";
/** The `dokit_error` code of a refused presence value. */
export const PRESENCE_REJECTED = "PRESENCE_REJECTED";

/** A client's presence: its value (`null` leaves), and whether it receives presence (default: it does, once it sent any). */
export type PresenceClientFrame = { type: "dokit_presence"; value?: unknown; watch?: boolean };
/** One connection's presence, `[id, value]` (pairs, so an id is never an object key). */
export type PresenceEntry<P = unknown> = [id: string, value: P];
/**
 * Presence sent to a watching connection: a snapshot (`you`, `all`: it replaces what the client knew), or
 * one tick's changes (`set`: joins and updates; `left`: ids no longer present).
 */
export type PresenceServerFrame<P = unknown> =
  | { type: "dokit_presence"; you: string; all: PresenceEntry<P>[] }
  | { type: "dokit_presence"; set?: PresenceEntry<P>[]; left?: string[] };
