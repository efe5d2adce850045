// useStream: one stream of the object (`dokit/streams`) as it grows, re-rendered per arrival.
import { useEffect, useState } from "react";
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

type Snapshot<T> = UseStreamResult<T>;

const initial = <T>(from: number): Snapshot<T> => ({ chunks: [], cursor: from, state: "streaming", upToDate: false, error: undefined });

/**
 * Reads one stream while the component is mounted: replay, then live appends, across reconnects
 * (no chunk twice, none missed). A new `id` or `from` starts a new read; unmounting stops it.
 * @param client - an AgentClient (for useAgent, its `client`)
 * @param id - the stream id; `undefined` reads nothing
 * @returns the chunks so far, the cursor, the state, whether it is up to date, an error
 */
export function useStream<T = unknown>(client: { readonly streams: ClientStreams }, id: string | undefined, options: UseStreamOptions = {}): UseStreamResult<T> {
  const from = options.from ?? 0;
  const [snapshot, setSnapshot] = useState<Snapshot<T>>(() => initial(from));
  const streams = client.streams;
  useEffect(() => {
    setSnapshot(initial(from));
    if (id === undefined) return;
    const reader = streams.read<T>(id, { from, onUpToDate: () => setSnapshot((s) => ({ ...s, upToDate: true })) });
    let live = true;
    void (async () => {
      try {
        for await (const { chunk } of reader) {
          if (!live) return;
          setSnapshot((s) => ({ ...s, chunks: [...s.chunks, chunk], cursor: s.cursor + 1 }));
        }
        if (live) setSnapshot((s) => ({ ...s, state: reader.state, error: reader.error, upToDate: true }));
      } catch (error) {
        if (!live) return;
        const code = (error as Partial<StreamReadError> | undefined)?.code;
        const message = error instanceof Error ? error.message : String(error);
        setSnapshot((s) => ({ ...s, state: code === "STREAM_DELETED" || code === "STREAM_NOT_FOUND" ? "deleted" : s.state, error: message }));
      }
    })();
    return () => {
      live = false;
      void reader.return();
    };
  }, [streams, id, from]);
  return snapshot;
}
