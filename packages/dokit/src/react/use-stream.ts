// useStream: one stream of the object (`dokit/streams`) as it grows, re-rendered per arrival.
import { useMemo, useSyncExternalStore } from "react";
import type { ClientStreams, StreamReadError } from "../client/streams";

/** Options of {@link useStream}. */
export interface UseStreamOptions {
  /** The first cursor to read (e.g. one kept across a page reload with the chunks before it). Default 0. */
  from?: number;
}

/** What {@link useStream} returns. */
export interface UseStreamResult<T> {
  /** The chunks read so far, in cursor order (from `from` on). */
  readonly chunks: readonly T[];
  /** The next cursor: `from` plus how many chunks were read. */
  readonly cursor: number;
  /** `streaming` until the stream ends; then how it ended. */
  readonly state: "streaming" | "completed" | "errored" | "deleted";
  /** Whether every chunk stored so far has arrived (the reader is tailing live appends). */
  readonly upToDate: boolean;
  /** The producer's recorded reason (`errored`), or why reading failed (a missing or deleted stream). */
  readonly error: string | undefined;
}

/**
 * A useSyncExternalStore source over one stream: the first subscriber starts the read, the last
 * one to leave stops it; each arrival renews the snapshot (chunks are appended to one array, so a
 * long stream costs no copy per chunk; the snapshot object is new each time).
 */
export function createStreamStore<T>(streams: ClientStreams, id: string | undefined, from = 0) {
  const chunks: T[] = [];
  let snapshot: UseStreamResult<T> = { chunks, cursor: from, state: "streaming", upToDate: false, error: undefined };
  const listeners = new Set<() => void>();
  let stop: (() => void) | undefined;
  const update = (change: Partial<UseStreamResult<T>>) => {
    snapshot = { ...snapshot, ...change };
    for (const listener of listeners) listener();
  };
  const start = () => {
    if (id === undefined) return undefined;
    const reader = streams.read<T>(id, { from: snapshot.cursor, onUpToDate: () => update({ upToDate: true }) });
    let live = true;
    void (async () => {
      try {
        for await (const { chunk } of reader) {
          if (!live) return;
          chunks.push(chunk);
          update({ cursor: reader.cursor });
        }
        if (live) update({ state: reader.state, error: reader.error, upToDate: true });
      } catch (error) {
        if (!live) return;
        // SAFETY: reads an optional `code`; any thrown value may lack it.
        const code = (error as Partial<StreamReadError> | undefined)?.code;
        const message = error instanceof Error ? error.message : String(error);
        update({ state: code === "STREAM_DELETED" || code === "STREAM_NOT_FOUND" ? "deleted" : snapshot.state, error: message });
      }
    })();
    return () => {
      live = false;
      void reader.return();
    };
  };
  return {
    subscribe(onChange: () => void): () => void {
      listeners.add(onChange);
      if (listeners.size === 1 && snapshot.state === "streaming" && snapshot.error === undefined) stop = start();
      return () => {
        listeners.delete(onChange);
        if (listeners.size === 0) {
          stop?.();
          stop = undefined;
        }
      };
    },
    get: () => snapshot,
  };
}

/**
 * Reads one stream while the component is mounted: replay, then live appends, across reconnects
 * (no chunk twice, none missed). A render alone sends nothing; a new `id` or `from` starts a new read.
 * @param client - an AgentClient (for useAgent, its `client`)
 * @param id - the stream id; `undefined` reads nothing
 * @returns the chunks so far, the cursor, the state, whether it is up to date, an error
 */
export function useStream<T = unknown>(client: { readonly streams: ClientStreams }, id: string | undefined, options: UseStreamOptions = {}): UseStreamResult<T> {
  const from = options.from ?? 0;
  const streams = client.streams;
  const store = useMemo(() => createStreamStore<T>(streams, id, from), [streams, id, from]);
  return useSyncExternalStore(store.subscribe, store.get, store.get);
}
