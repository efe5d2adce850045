import type { Connection } from "../lifecycle/connection";
import type { WebSockets } from "../websockets/websockets";

/** A JSON value: what a chunk and a metadata value may be. */
export type StreamJson = string | number | boolean | null | StreamJson[] | { [key: string]: StreamJson };

/** A stream is `streaming` from `open()` until its producer settles it; both settled states keep the chunks readable. */
export type StreamState = "streaming" | "completed" | "errored";

/** One durable chunk: `seq` is its cursor (0-based, assigned at append, stable across replays). */
export interface StreamChunk {
  readonly seq: number;
  readonly chunk: StreamJson;
}

/** What `status()` and `list()` report of one stream. */
export interface StreamStatus {
  streamId: string;
  state: StreamState;
  /** The next cursor to be assigned: how many chunks are stored. */
  cursor: number;
  /** The lookup key given at `open()`, when one was. */
  tag?: string;
  metadata?: Record<string, StreamJson>;
  /** The reason `error()` recorded, when the state is `errored`. */
  error?: string;
  createdAt: number;
  /** The last write: the newest append, or the settlement. */
  updatedAt: number;
  closedAt?: number;
}

/** The producer's handle, returned by `open()`. */
export interface StreamWriter {
  readonly streamId: string;
  /** The next cursor to be assigned. */
  readonly cursor: number;
  /**
   * Stores one chunk (a synchronous durable write) and wakes live readers.
   * @returns its cursor
   * @throws StreamClosedError (settled or deleted), StreamSerializationError (not JSON, too large), DokitError STALE_WRITER (a later `open()` took the stream)
   */
  append(chunk: StreamJson): number;
  /** Settles the stream as completed; a no-op when it is settled or deleted already (`commit` then does not run). */
  close(options?: StreamSettleOptions): void;
  /** Settles the stream as errored, recording `reason`; same no-op rule as `close`. */
  error(reason?: string, options?: StreamSettleOptions): void;
}

/**
 * The cutover: the settlement, your own synchronous writes (`commit`) and the deletion of the
 * stream's rows (`discard`) in one SQLite transaction. A throw from `commit` rolls it all back and
 * the stream stays live. Readers are woken only after the transaction committed.
 */
export interface StreamSettleOptions {
  /** Synchronous writes committed with the settlement; must not await. */
  readonly commit?: () => void;
  /** Delete the stream's rows in the same transaction: `status()` then returns null, tailing readers end. */
  readonly discard?: boolean;
}

/** Options of `open()`. */
export interface StreamOpenOptions {
  /** JSON metadata kept with the stream (set when the stream is created). */
  metadata?: Record<string, StreamJson>;
  /** A lookup key, not unique, fixed at creation; reopening a live stream with another tag throws. */
  tag?: string;
}

/** Options of `read()`. */
export interface StreamReadOptions {
  /** The first cursor to yield (inclusive). Default 0. */
  from?: number;
  /** Ends a read that is tailing a live stream: the iterator throws the signal's reason. */
  signal?: AbortSignal;
}

/** Options of `readBatches()`. */
export interface StreamReadBatchesOptions extends StreamReadOptions {
  /** The most chunks per yielded array. Default 100. */
  batchSize?: number;
  /** Called once, when the reader first reaches the stored tail (not when the stream ends). */
  onUpToDate?: () => void;
}

/** Filters of `list()`. */
export interface StreamListOptions {
  state?: StreamState | StreamState[];
  /** Only streams opened with this tag. */
  tag?: string;
  /** The most streams returned. */
  limit?: number;
}

/** Which settled streams the object deletes by itself, on its shared alarm (off by default). */
export interface StreamRetention {
  /** Delete a settled stream this many ms after it settled. */
  maxAgeMs?: number;
  /** Keep at most this many settled streams; the oldest settled go first. */
  maxCount?: number;
}

/** Options of `new Streams(...)`. */
export interface StreamsOptions {
  /** The largest chunk, as JSON, in UTF-8 bytes: 1 to 1,572,864 (default 1 MiB). Also the bound of `metadata`. */
  readonly maxChunkBytes?: number;
  /** Deletes settled streams by age or count on the object's one alarm. Default: none (explicit `delete()` or a cutover's `discard`). */
  readonly retention?: StreamRetention;
  /**
   * The object's WebSockets: its connections may read streams with `dokit_stream_read` frames
   * (the dokit client's `client.streams.read`). Without it, streams are read in the object and over SSE.
   */
  readonly webSockets?: WebSockets;
  /** Whether a connection may read a stream. Default: every connection may read every stream. */
  readonly canRead?: (connection: Connection, streamId: string) => boolean;
  /** How many streams one connection may read at once, 1 to 1,000 (default 16). */
  readonly maxReadsPerConnection?: number;
}
