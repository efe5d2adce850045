// The client side of `dokit/streams`' WebSocket readers: `client.streams.read(id, { from })`
// is an async iterator of a stream's chunks that survives reconnects. Each reader keeps the
// next cursor it expects; every new socket asks the server again from there, and a chunk
// below it (sent twice across a reconnect) is skipped, so nothing repeats and nothing is
// missed. The reader ends with the stream's settlement, and throws plainly when the stream
// does not exist, was deleted before it was read to the end, or the cursor is past its end.
//
// Pacing: a frame that ends a replay round carries a token, answered at once with an ack.
// Until the server has the ack it ignores read frames, so the ack asks again for every read
// still unanswered (the server answers each read with exactly one more, up-to-date or error
// frame, in order, so the unanswered ones at the ack are the ones it ignored).
import { DOKIT_ERROR } from "../protocol/dokit-error";
import { STREAM_ACK, STREAM_CANCEL, STREAM_CHUNKS, STREAM_END, STREAM_FRAME_PREFIX, STREAM_MORE, STREAM_READ, STREAM_UP_TO_DATE, type StreamWireChunk } from "../protocol/streams";

/** What stream readers need from their client. */
export interface StreamsSocket {
  /** Sends a frame on the open socket; `false` (nothing sent) when no socket is open. */
  sendNow(frame: string): boolean;
}

/** Options of `client.streams.read`. */
export interface ClientStreamReadOptions {
  /** The first cursor to read (inclusive). Default 0. */
  from?: number;
  /** Stops the reader: the iterator throws the signal's reason. */
  signal?: AbortSignal;
  /** Called once, when the reader first reaches the stream's stored tail (every chunk so far read). */
  onUpToDate?: () => void;
}

/** Why a stream reader failed: `STREAM_NOT_FOUND`, `STREAM_DELETED`, `CURSOR_PAST_END`, `STREAM_READ_REFUSED`, `TOO_MANY_READS`, `CONNECTION_CLOSED`, … */
export class StreamReadError extends Error {
  override readonly name = "StreamReadError";
  /** A stable string to branch on. */
  readonly code: string;
  /** The stream. */
  readonly streamId: string;
  constructor(code: string, streamId: string, message: string) {
    super(message);
    this.code = code;
    this.streamId = streamId;
  }
}

/** One chunk of a stream: its cursor and its value. */
export interface ClientStreamChunk<T = unknown> {
  readonly seq: number;
  readonly chunk: T;
}

/** A reader of one stream: an async iterator of its chunks, with where it is. */
export class StreamReader<T = unknown> implements AsyncIterableIterator<ClientStreamChunk<T>> {
  /** The stream read. */
  readonly streamId: string;
  /** The next cursor this reader expects (how many chunks from 0 it has been given, with `from`). */
  cursor: number;
  /** `streaming` until the stream ends; then how it ended. */
  state: "streaming" | "completed" | "errored" | "deleted" = "streaming";
  /** The reason the producer recorded, when the stream ended `errored`. */
  error: string | undefined;
  readonly #queue: ClientStreamChunk<T>[] = [];
  #failure: Error | undefined;
  #done = false;
  #wake: (() => void) | undefined;
  readonly #upToDate: (() => void) | undefined;
  #reachedTail = false;
  readonly #owner: ClientStreams;

  constructor(owner: ClientStreams, streamId: string, from: number, onUpToDate: (() => void) | undefined) {
    this.#owner = owner;
    this.streamId = streamId;
    this.cursor = from;
    this.#upToDate = onUpToDate;
  }

  /** @internal chunks from the server: below the cursor they are repeats, above it a gap (asked again) */
  take(chunks: StreamWireChunk[]): void {
    for (const { seq, chunk } of chunks) {
      if (typeof seq !== "number" || seq < this.cursor) continue;
      if (seq > this.cursor) return this.#owner.resume(this);
      // SAFETY: the reader's type names what the stream's producer appends.
      this.#queue.push({ seq, chunk: chunk as T });
      this.cursor++;
    }
    this.#signal();
  }

  /** @internal the server's up-to-date frame */
  reachedTail(cursor: number): void {
    if (this.#reachedTail || cursor > this.cursor) return;
    this.#reachedTail = true;
    this.#upToDate?.();
  }

  /** @internal the server's end frame */
  ended(state: "completed" | "errored" | "deleted", cursor: number, error: string | undefined): void {
    if (cursor > this.cursor) {
      // Chunks the reader has not been given: read again (a deleted stream then answers not found).
      if (state !== "deleted") return this.#owner.resume(this);
      return this.fail(new StreamReadError("STREAM_DELETED", this.streamId, `dokit: stream "${this.streamId}" was deleted at cursor ${cursor} before this reader read past ${this.cursor}`));
    }
    this.state = state;
    this.error = error;
    this.#done = true;
    this.#owner.forget(this);
    this.#signal();
  }

  /** @internal ends the reader with an error */
  fail(error: Error): void {
    if (this.#done) return;
    this.#failure = error;
    this.#done = true;
    this.#owner.forget(this);
    this.#signal();
  }

  async next(): Promise<IteratorResult<ClientStreamChunk<T>>> {
    for (;;) {
      const chunk = this.#queue.shift();
      if (chunk) return { value: chunk, done: false };
      if (this.#failure) throw this.#failure;
      if (this.#done) return { value: undefined, done: true };
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  /** Stops reading (the server is told); the iterator ends. */
  async return(): Promise<IteratorResult<ClientStreamChunk<T>>> {
    if (!this.#done) {
      this.#done = true;
      this.#queue.length = 0;
      this.#owner.cancel(this);
    }
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  #signal(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/** The stream readers of one client (`client.streams`). */
export class ClientStreams {
  readonly #socket: StreamsSocket;
  readonly #readers = new Map<string, StreamReader<unknown>>();
  /** Reads sent on this socket and not answered yet, by stream. */
  readonly #asked = new Map<string, number>();
  /** Set while a frame with a token is handled: reads it starts go in its ack instead of their own frames. */
  #acking = false;

  constructor(socket: StreamsSocket) {
    this.#socket = socket;
  }

  /**
   * Reads a stream of the object (`dokit/streams` with the object's WebSockets): its chunks from
   * `from`, then live appends, until it settles. Survives reconnects: each new socket resumes from
   * the next cursor, without repeating or skipping a chunk.
   * @throws StreamReadError (from the iterator) when the stream does not exist or was deleted, or the cursor is past its end
   */
  read<T = unknown>(streamId: string, options: ClientStreamReadOptions = {}): StreamReader<T> {
    const from = options.from ?? 0;
    if (!Number.isSafeInteger(from) || from < 0) throw new RangeError(`dokit: from must be a cursor (an integer from 0), got ${String(options.from)}`);
    const current = this.#readers.get(streamId);
    if (current) current.fail(new StreamReadError("READ_REPLACED", streamId, `dokit: stream "${streamId}" is read again by this client`));
    const reader = new StreamReader<T>(this, streamId, from, options.onUpToDate);
    // SAFETY: the map holds readers of any chunk type; each casts its own chunks (take).
    this.#readers.set(streamId, reader as StreamReader<unknown>);
    const signal = options.signal;
    if (signal) {
      const abort = () => {
        reader.fail(signal.reason instanceof Error ? signal.reason : new StreamReadError("ABORTED", streamId, "dokit: the read was aborted"));
        this.cancel(reader as StreamReader<unknown>);
      };
      if (signal.aborted) abort();
      else signal.addEventListener("abort", abort, { once: true });
    }
    this.resume(reader as StreamReader<unknown>);
    return reader;
  }

  /** @internal asks the server for a reader's stream from its cursor (now, or when a socket opens) */
  resume(reader: StreamReader<unknown>): void {
    if (this.#readers.get(reader.streamId) !== reader) return;
    if (!this.#acking && !this.#socket.sendNow(JSON.stringify({ type: STREAM_READ, stream: reader.streamId, from: reader.cursor }))) return;
    this.#asked.set(reader.streamId, (this.#asked.get(reader.streamId) ?? 0) + 1);
  }

  /** @internal a reader ended */
  forget(reader: StreamReader<unknown>): void {
    if (this.#readers.get(reader.streamId) === reader) this.#readers.delete(reader.streamId);
  }

  /** @internal a reader stopped early: the server stops sending */
  cancel(reader: StreamReader<unknown>): void {
    if (this.#readers.get(reader.streamId) !== reader) return;
    this.#readers.delete(reader.streamId);
    this.#socket.sendNow(JSON.stringify({ type: STREAM_CANCEL, stream: reader.streamId }));
  }

  /** A socket opened: every reader asks again from its cursor. */
  opened(): void {
    this.#asked.clear();
    for (const reader of this.#readers.values()) this.resume(reader);
  }

  /** The client stopped for good: readers fail. */
  stopped(): void {
    for (const reader of [...this.#readers.values()]) reader.fail(new StreamReadError("CONNECTION_CLOSED", reader.streamId, "dokit: the connection closed for good"));
  }

  /**
   * Acts on a stream frame.
   * @returns whether `text` was one (a stream frame, or a `dokit_error` naming a stream)
   */
  frame(text: string): boolean {
    const isStream = text.startsWith(STREAM_FRAME_PREFIX);
    if (!isStream && !(text.startsWith(`{"type":"${DOKIT_ERROR}"`) && text.includes('"stream":'))) return false;
    let frame: Record<string, unknown>;
    try {
      // SAFETY: checked field by field below.
      frame = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return false;
    }
    const token = frame.token;
    if (typeof token !== "string") return this.#handle(frame, isStream);
    this.#acking = true;
    try {
      return this.#handle(frame, isStream);
    } finally {
      this.#acking = false;
      this.#ack(token);
    }
  }

  /** Acknowledges a round, asking again for every read not answered (the server ignored them). */
  #ack(token: string): void {
    const reads: { stream: string; from: number }[] = [];
    for (const stream of this.#asked.keys()) {
      const reader = this.#readers.get(stream);
      if (!reader) this.#asked.delete(stream);
      else {
        reads.push({ stream, from: reader.cursor });
        this.#asked.set(stream, 1);
      }
    }
    this.#socket.sendNow(JSON.stringify(reads.length > 0 ? { type: STREAM_ACK, token, reads } : { type: STREAM_ACK, token }));
  }

  #handle(frame: Record<string, unknown>, isStream: boolean): boolean {
    const stream = frame.stream;
    // A read's answer: one more, up-to-date or error frame naming its stream.
    if (typeof stream === "string" && (frame.type === STREAM_MORE || frame.type === STREAM_UP_TO_DATE || frame.type === DOKIT_ERROR)) {
      const asked = this.#asked.get(stream) ?? 0;
      if (asked > 1) this.#asked.set(stream, asked - 1);
      else this.#asked.delete(stream);
    }
    const reader = typeof stream === "string" ? this.#readers.get(stream) : undefined;
    if (!reader) return isStream;
    switch (frame.type) {
      // {"type":"dokit_stream","stream","chunks":[{seq,chunk}]}
      case STREAM_CHUNKS:
        // SAFETY: take() skips entries without a numeric seq.
        if (Array.isArray(frame.chunks)) reader.take(frame.chunks as StreamWireChunk[]);
        return true;
      // {"type":"dokit_stream_more","stream","cursor"}: the replay continues when asked again
      case STREAM_MORE:
        if (frame.cursor === reader.cursor) this.resume(reader);
        return true;
      // {"type":"dokit_stream_up_to_date","stream","cursor"}
      case STREAM_UP_TO_DATE:
        if (typeof frame.cursor === "number") reader.reachedTail(frame.cursor);
        return true;
      // {"type":"dokit_stream_end","stream","state","cursor","error"?}
      case STREAM_END: {
        const state = frame.state;
        if ((state === "completed" || state === "errored" || state === "deleted") && typeof frame.cursor === "number") {
          reader.ended(state, frame.cursor, typeof frame.error === "string" ? frame.error : undefined);
        }
        return true;
      }
      // {"type":"dokit_error","code","error","stream"}
      case DOKIT_ERROR: {
        const code = typeof frame.code === "string" ? frame.code : "STREAM_ERROR";
        const message = typeof frame.error === "string" ? frame.error : code;
        // A stream that is gone after the reader read some of it was deleted meanwhile.
        if (code === "STREAM_NOT_FOUND" && reader.cursor > 0) {
          reader.fail(new StreamReadError("STREAM_DELETED", reader.streamId, `dokit: stream "${reader.streamId}" was deleted after this reader read ${reader.cursor} chunk(s)`));
        } else reader.fail(new StreamReadError(code, reader.streamId, message));
        return true;
      }
      default:
        return true;
    }
  }
}
