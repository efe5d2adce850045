// usePresence: who is connected to the object, re-rendered on every change.
import { useMemo, useSyncExternalStore } from "react";
import type { ClientPresence, PresenceEntry } from "../client/presence";

/** What {@link usePresence} returns. */
export interface UsePresenceResult<P> {
  /** This connection's id; `undefined` until the first snapshot. */
  readonly self: string | undefined;
  /** Everyone present, this connection included when it has a value. */
  readonly list: PresenceEntry<P>[];
  /** Everyone present but this connection. */
  readonly others: PresenceEntry<P>[];
  /** Publishes this connection's value (kept and re-sent after every reconnect). */
  readonly set: (value: P) => void;
  /** Leaves the list while staying connected. */
  readonly clear: () => void;
}

type Snapshot<P> = Pick<UsePresenceResult<P>, "self" | "list" | "others">;

/** @returns the presence's current list */
function take<P>(presence: ClientPresence<P>): Snapshot<P> {
  const list = presence.list();
  const self = presence.self;
  return { self, list, others: list.filter((entry) => entry.id !== self) };
}

/** Unchanged entries keep their value objects (presence.ts), so `===` finds them. */
function same<P>(a: Snapshot<P>, b: Snapshot<P>): boolean {
  return (
    a.self === b.self &&
    a.list.length === b.list.length &&
    a.list.every((entry, index) => entry.id === b.list[index]!.id && entry.value === b.list[index]!.value)
  );
}

/**
 * A useSyncExternalStore source over one presence: a stable snapshot, renewed when the list changes.
 * Subscribing starts watching.
 */
export function createPresenceStore<P>(presence: ClientPresence<P>) {
  let snapshot = take(presence);
  const refresh = (onChange: () => void) => {
    const next = take(presence);
    if (same(next, snapshot)) return;
    snapshot = next;
    onChange();
  };
  return {
    subscribe(onChange: () => void): () => void {
      const off = presence.subscribe(() => refresh(onChange)); // subscribing starts watching
      refresh(onChange); // anything that changed between render and subscribe
      return off;
    },
    get: () => snapshot,
  };
}

/**
 * Presence for a component: starts watching when it mounts (a render alone sends
 * nothing) and re-renders when anyone joins, changes their value or leaves.
 * Watching continues after unmount; `client.presence.unwatch()` stops it.
 * @param client - an AgentClient (for useAgent, its `client`)
 * @returns this connection's id, everyone present, everyone else, and `set`/`clear` for this connection's value
 */
export function usePresence<P = unknown>(client: { readonly presence: ClientPresence<P> }): UsePresenceResult<P> {
  const presence = client.presence;
  const store = useMemo(() => createPresenceStore(presence), [presence]);
  const snapshot = useSyncExternalStore(store.subscribe, store.get, store.get);
  return useMemo(
    () => ({ ...snapshot, set: (value: P) => presence.set(value), clear: () => presence.clear() }),
    [presence, snapshot],
  );
}
