// useRoom: a RoomMember owned by a component, with the room's messages, last seq, gaps and drains reactive.
import { useEffect, useMemo, useRef, useSyncExternalStore } from "react";
import { RoomMember, type RoomMemberOptions, type RoomMessage } from "../client/room";
import { CLOSE_ROOM_DRAINED } from "../protocol/rooms";

/** Options of {@link useRoom}: RoomMember's, plus how many messages the hook keeps and a drain callback. */
export interface UseRoomOptions<T> extends RoomMemberOptions<T> {
  /** The newest messages `messages` keeps (older ones are dropped from it; callbacks see every one): 0 to 100,000 (default 200). */
  keep?: number;
  /** Runs when the shard this member was on was drained (close 3009); the member reconnects and resumes by itself. */
  onDrain?: () => void;
}

/** The reactive part of {@link useRoom}'s result. */
export interface RoomSnapshot<T> {
  /** The newest `keep` messages, in seq order, each once. */
  readonly messages: readonly RoomMessage<T>[];
  /** The last seq received (or told of by a gap); `undefined` before the first join. */
  readonly seq: number | undefined;
  /** The shard the last connection joined; `undefined` before the first join. */
  readonly shard: number | undefined;
  /** The room-wide connection count: from the last join, then as the room tells of changes. */
  readonly count: number;
  /** The gaps told of (messages older than the room's log), in order. */
  readonly gaps: readonly { from: number; to: number }[];
  /**
   * How many times the room's order started again (its sequencer lost its storage): `seq` went back
   * to 0, and `messages` holds the old order's messages before the new one's.
   */
  readonly resets: number;
  /** How many times this member's shard was drained under it. */
  readonly drains: number;
  /** Whether the current connection has joined (its welcome arrived). */
  readonly joined: boolean;
  /** This member's public id, the `from` of its own messages; `undefined` before the first join. */
  readonly self: string | undefined;
}

/** What {@link useRoom} returns. */
export interface UseRoomResult<T> extends RoomSnapshot<T> {
  /** Publishes to the whole room. @returns the message's seq once the room ordered it */
  readonly publish: (data: T) => Promise<number>;
  /** The member underneath (its `client`, `close()`). */
  readonly member: RoomMember<T>;
}

/** A useSyncExternalStore source fed by a member's callbacks: a new snapshot per change, the same one otherwise. */
export function createRoomStore<T>(keep: number) {
  let snapshot: RoomSnapshot<T> = { messages: [], seq: undefined, shard: undefined, count: 0, gaps: [], resets: 0, drains: 0, joined: false, self: undefined };
  const listeners = new Set<() => void>();
  const change = (next: Partial<RoomSnapshot<T>>) => {
    snapshot = { ...snapshot, ...next };
    for (const listener of listeners) listener();
  };
  return {
    subscribe(listener: () => void): () => void {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    get: () => snapshot,
    message(message: RoomMessage<T>): void {
      const kept = snapshot.messages.length >= keep ? snapshot.messages.slice(snapshot.messages.length - keep + 1) : snapshot.messages;
      change({ messages: keep === 0 ? [] : [...kept, message], seq: message.seq });
    },
    gap(gap: { from: number; to: number }): void {
      change({ gaps: [...snapshot.gaps, gap], seq: Math.max(snapshot.seq ?? 0, gap.to) });
    },
    reset(): void {
      change({ resets: snapshot.resets + 1, seq: 0 });
    },
    join(welcome: { shard: number; count: number }, seq: number | undefined, self?: string): void {
      change({ shard: welcome.shard, count: welcome.count, seq, joined: true, self });
    },
    count(count: number): void {
      change({ count });
    },
    closed(code: number): void {
      change({ joined: false, ...(code === CLOSE_ROOM_DRAINED && { drains: snapshot.drains + 1 }) });
    },
  };
}

/** @returns the options that decide which room the member joins; a change makes a new member */
function roomKey(options: UseRoomOptions<never>): string {
  const { host, prefix, basePath, id, protocol, query } = options;
  return JSON.stringify([host, prefix, basePath, id, protocol, typeof query === "function" ? "fn" : query]);
}

/**
 * A room member and its store, created closed: `start()` connects and returns what leaves the room.
 * Callbacks are read from `latest()` when they run, so they may change after creation.
 */
export function createRoom<T>(options: UseRoomOptions<T>, latest: () => UseRoomOptions<T>) {
  const keep = options.keep ?? 200;
  if (!Number.isInteger(keep) || keep < 0 || keep > 100_000) throw new RangeError(`useRoom: keep must be an integer from 0 to 100,000 (got ${String(keep)})`);
  const store = createRoomStore<T>(keep);
  const member: RoomMember<T> = new RoomMember<T>({
    ...options,
    startClosed: true,
    query: typeof options.query === "function" ? () => (latest().query as () => never)() : options.query,
    onRoomMessage: (message) => {
      store.message(message);
      latest().onRoomMessage?.(message);
    },
    onGap: (gap) => {
      store.gap(gap);
      latest().onGap?.(gap);
    },
    onReset: (reset) => {
      store.reset();
      latest().onReset?.(reset);
    },
    onJoin: (welcome) => {
      store.join(welcome, member.seq, member.self);
      latest().onJoin?.(welcome);
    },
    onCount: (count) => {
      store.count(count);
      latest().onCount?.(count);
    },
    onPublishError: (error) => latest().onPublishError?.(error),
  });
  const start = (): (() => void) => {
    const onClose = (event: Event) => {
      const code = (event as CloseEvent).code;
      store.closed(code);
      if (code === CLOSE_ROOM_DRAINED) latest().onDrain?.();
    };
    member.client.addEventListener("close", onClose);
    member.client.reconnect();
    return () => {
      member.client.removeEventListener("close", onClose);
      member.close();
    };
  };
  return { member, store, start };
}

/**
 * Joins a room (dokit/rooms) from a component: the member connects on mount, leaves on unmount,
 * and is replaced when the address options change; callbacks may change freely between renders.
 * Every message arrives once, in seq order, across reconnects and drains (the member resumes with
 * its last seq); gaps and drains are in the result and reach `onGap` and `onDrain`.
 * @returns the newest messages, the last seq, the shard, the room-wide count (re-rendered when it changes), gaps, drains and `publish`
 */
export function useRoom<T = unknown>(options: UseRoomOptions<T>): UseRoomResult<T> {
  const latest = useRef(options);
  latest.current = options;
  const key = roomKey(options as UseRoomOptions<never>);
  // Created closed, so a render React throws away leaves no socket behind.
  const room = useMemo(() => createRoom(options, () => latest.current), [key, options.keep]);
  const snapshot = useSyncExternalStore(room.store.subscribe, room.store.get, room.store.get);
  useEffect(() => room.start(), [room]);
  const { member } = room;
  return useMemo(() => ({ ...snapshot, publish: (data: T) => member.publish(data), member }), [member, snapshot]);
}
