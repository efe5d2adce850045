import { type AlarmWork, claimAlarm } from "../lifecycle/alarms";
import type { Capability, Claims } from "../lifecycle/capability";
import { DokitError } from "../lifecycle/errors";
import type { Lifecycle } from "../lifecycle/lifecycle";
import { utf8Length } from "../utf8/size";
import { StreamClosedError, StreamNotFoundError, StreamSerializationError, streamsError, type StreamsErrorCode } from "./errors";
import { StreamReaders } from "./readers";
import { type Block, type Live, statusOf, StreamStore, type Tail } from "./store";
import type {
  StreamChunk,
  StreamJson,
  StreamListOptions,
  StreamOpenOptions,
  StreamReadBatchesOptions,
  StreamReadOptions,
  StreamRetention,
  StreamSettleOptions,
  StreamsOptions,
  StreamState,
  StreamStatus,
  StreamWriter,
} from "./types";

/** The default ceiling of one chunk, as JSON (1 MiB). */
export const DEFAULT_MAX_CHUNK_BYTES = 1_048_576;
/** The largest `maxChunkBytes` accepted: a block row (at most one chunk beyond 256 KiB) stays under SQLite's 2 MB row limit. */
const MAX_CHUNK_BYTES_CEILING = 1_572_864;
const DEFAULT_BATCH = 100;
/** A live tail yields at most this many chunks per array (everything that accumulated, bounded). */
const TAIL_BATCH = 1000;
const ALARM_KEY = "streams";
const OWNER = "Streams";

/**
 * Durable incremental output: `open()` a stream, `append()` chunks (synchronous durable writes that
 * wake live readers), settle it with `close()` or `error()`. `read()` replays stored chunks from a
 * cursor, then tails live appends until the stream settles. Install with
 * `Lifecycle.install(this).use(streams)`; docs/streams.md.
 */
export class Streams implements Capability {
  readonly capabilityName = OWNER;
  /** The largest chunk, as JSON, in UTF-8 bytes. */
  readonly maxChunkBytes: number;
  readonly #retention: StreamRetention | undefined;
  readonly #options: StreamsOptions;
  #lifecycle: Lifecycle | undefined;
  #store: StreamStore | undefined;
  #sweepWork: AlarmWork | undefined;
  #readers: StreamReaders | undefined;
  /** Live streams as appends need them (row and tail block), by id; filled on first use after a wake. */
  readonly #live = new Map<string, Live>();
  /** In-object readers waiting for the next write of a stream. */
  readonly #waiters = new Map<string, Set<() => void>>();

  /**
   * @param options - the chunk ceiling, retention, the WebSockets whose connections may read
   * @throws DokitError INVALID_ARGUMENT for a bound out of range
   */
  constructor(options: StreamsOptions = {}) {
    this.#options = options;
    this.maxChunkBytes = inRange("maxChunkBytes", options.maxChunkBytes ?? DEFAULT_MAX_CHUNK_BYTES, 1, MAX_CHUNK_BYTES_CEILING);
    const retention = options.retention;
    if (retention) {
      if (retention.maxAgeMs !== undefined) inRange("retention.maxAgeMs", retention.maxAgeMs, 0, 3_650 * 86_400_000);
      if (retention.maxCount !== undefined) inRange("retention.maxCount", retention.maxCount, 0, 1_000_000_000);
      if (retention.maxAgeMs !== undefined || retention.maxCount !== undefined) this.#retention = retention;
    }
    if (options.maxReadsPerConnection !== undefined) inRange("maxReadsPerConnection", options.maxReadsPerConnection, 1, 1000);
  }

  attach(claims: Claims): void {
    this.#lifecycle = claims.lifecycle;
    const store = (this.#store = new StreamStore(claims.lifecycle.ctx.storage.sql));
    // The tables exist before any handler runs (idempotent DDL, once per start or wake).
    claims.onStart(() => store.ensure());
    if (this.#retention) this.#sweepWork = claimAlarm(claims, ALARM_KEY, () => this.#sweep());
    const sockets = this.#options.webSockets;
    if (sockets) {
      this.#readers = new StreamReaders(this, this.#store, sockets, this.#options);
      this.#readers.attach(claims);
    }
  }

  // ------------------------------------------------------------------ writing

  /**
   * Opens a stream for writing. Idempotent on the id: a live stream gives a writer at its cursor
   * (and earlier writers of it become stale: they can no longer append or settle it).
   * @throws StreamClosedError when the stream is settled; DokitError TAG_CONFLICT when it is live with another tag;
   *   StreamSerializationError for metadata that is not a JSON object or is over `maxChunkBytes`
   */
  async open(streamId: string, options: StreamOpenOptions = {}): Promise<StreamWriter> {
    checkId(streamId);
    const store = this.#storeOf();
    const tag = options.tag ?? null;
    if (tag !== null && typeof tag !== "string") throw streamsError("INVALID_ARGUMENT", `open("${streamId}"): tag must be a string`);
    const live = this.#liveOf(streamId);
    if (live) {
      if (tag !== null && live.row.tag !== tag) {
        throw streamsError("TAG_CONFLICT", `stream "${streamId}" is live with tag ${JSON.stringify(live.row.tag)}; it was reopened with tag ${JSON.stringify(tag)}`);
      }
      live.row.generation = store.bumpGeneration(streamId);
      return new Writer(this, streamId, live.row.generation);
    }
    const row = store.row(streamId);
    if (row) throw new StreamClosedError(streamId, `is ${row.state}: a settled stream cannot be reopened`);
    const metadata = options.metadata === undefined ? null : this.#serializeMetadata(streamId, options.metadata);
    const created = store.insert(streamId, tag, metadata, Date.now());
    this.#live.set(streamId, { row: created, tail: null });
    return new Writer(this, streamId, created.generation);
  }

  /** @internal the writer's append */
  appendAs(streamId: string, generation: number, chunk: StreamJson): number {
    const live = this.#writable(streamId, generation, "append to");
    const json = this.#serializeChunk(streamId, chunk);
    const seq = cursorOf(live.tail);
    live.tail = this.#storeOf().append(streamId, live.tail, seq, json, utf8Length(json), Date.now());
    this.#readers?.appended(streamId, seq, json);
    this.#wake(streamId);
    return seq;
  }

  /** @internal the writer's cursor */
  cursorOf(streamId: string): number {
    const live = this.#liveOf(streamId);
    if (live) return cursorOf(live.tail);
    return this.#storeOf().row(streamId)?.cursor ?? 0;
  }

  /** @internal the writer's close and error */
  settleAs(streamId: string, generation: number, state: "completed" | "errored", reason: string | null, options: StreamSettleOptions = {}): void {
    const live = this.#liveOf(streamId);
    // Settling twice, or a deleted stream: a no-op, so recovery callers stay idempotent.
    if (!live) return;
    if (live.row.generation !== generation) throw staleWriter(streamId);
    const store = this.#storeOf();
    const cursor = cursorOf(live.tail);
    const now = Date.now();
    const settle = () => {
      store.settle(streamId, state, reason, cursor, now);
      options.commit?.();
      if (options.discard) store.delete(streamId);
    };
    if (options.commit || options.discard) this.#lifecycleOf().ctx.storage.transactionSync(settle);
    else settle();
    // Committed: only now does memory, and do readers, learn of it.
    this.#live.delete(streamId);
    this.#readers?.ended(streamId, options.discard ? "deleted" : state, cursor, reason);
    this.#wake(streamId);
    if (!options.discard) this.#retain();
  }

  // ------------------------------------------------------------------ reading

  /**
   * Replays stored chunks from `from` (inclusive), then tails live appends until the stream settles
   * (or is deleted). Aborting `signal` throws its reason.
   * @throws StreamNotFoundError when the stream does not exist; DokitError CURSOR_PAST_END when `from` is beyond its cursor
   */
  async *read(streamId: string, options: StreamReadOptions = {}): AsyncGenerator<StreamChunk, void, undefined> {
    for await (const batch of this.readBatches(streamId, options)) yield* batch;
  }

  /**
   * {@link read} in arrays: replay yields up to `batchSize` chunks per array, a live tail everything
   * that accumulated since the last wakeup. `onUpToDate` is called once, at the first arrival at the tail.
   * @throws StreamNotFoundError, DokitError CURSOR_PAST_END (as `read`)
   */
  async *readBatches(streamId: string, options: StreamReadBatchesOptions = {}): AsyncGenerator<StreamChunk[], void, undefined> {
    const store = this.#storeOf();
    const batchSize = inRange("batchSize", options.batchSize ?? DEFAULT_BATCH, 1, 100_000);
    let next = this.checkFrom(streamId, options.from);
    const signal = options.signal;
    let upToDate = false;
    let block: Block | undefined;
    for (;;) {
      signal?.throwIfAborted();
      const limit = upToDate ? Math.max(batchSize, TAIL_BATCH) : batchSize;
      const batch: StreamChunk[] = [];
      while (batch.length < limit) {
        if (!block || next >= block.first + block.chunks.length) block = store.blockAt(streamId, next);
        if (!block) break;
        const end = Math.min(block.first + block.chunks.length, next + limit - batch.length);
        // SAFETY: `next` is inside the block (end is bounded by its length).
        for (; next < end; next++) batch.push({ seq: next, chunk: block.chunks[next - block.first] as StreamJson });
      }
      if (batch.length > 0) {
        yield batch;
        continue;
      }
      // At the stored tail, in the same synchronous block as the read that found nothing more.
      if (!upToDate) {
        upToDate = true;
        options.onUpToDate?.();
      }
      if (!this.#liveOf(streamId)) return;
      block = undefined;
      // onUpToDate may have aborted the signal: an aborted signal never fires again.
      signal?.throwIfAborted();
      await this.#nextWrite(streamId, signal);
    }
  }

  /**
   * @internal checks where a read starts
   * @returns the first cursor
   * @throws StreamNotFoundError, DokitError CURSOR_PAST_END, INVALID_ARGUMENT
   */
  checkFrom(streamId: string, from: number | undefined): number {
    const start = from ?? 0;
    if (!Number.isSafeInteger(start) || start < 0) throw streamsError("INVALID_ARGUMENT", `read("${streamId}"): from must be a cursor (an integer from 0), got ${String(from)}`);
    const status = this.#statusNow(streamId);
    if (!status) throw new StreamNotFoundError(streamId);
    if (start > status.cursor) throw streamsError("CURSOR_PAST_END", `read("${streamId}"): from ${start} is past the stream's end (cursor ${status.cursor})`);
    return start;
  }

  /** @internal {@link status}, synchronously */
  statusSync(streamId: string): StreamStatus | null {
    return this.#statusNow(streamId);
  }

  /** @returns one stream's state and cursor, or null when it does not exist */
  async status(streamId: string): Promise<StreamStatus | null> {
    return this.#statusNow(streamId);
  }

  /** @returns streams, newest first, narrowed by state and tag */
  async list(options: StreamListOptions = {}): Promise<StreamStatus[]> {
    const states = options.state === undefined ? undefined : Array.isArray(options.state) ? options.state : [options.state];
    const limit = options.limit === undefined ? undefined : inRange("limit", options.limit, 0, Number.MAX_SAFE_INTEGER);
    const store = this.#storeOf();
    return store.list(states, options.tag, limit).map((row) => statusOf(row, row.state === "streaming" ? (this.#liveOf(row.id)?.tail ?? null) : null));
  }

  /**
   * Deletes a settled stream and its chunks.
   * @returns true when one was deleted, false when none exists
   * @throws DokitError STREAM_LIVE for a live stream (settle it first)
   */
  async delete(streamId: string): Promise<boolean> {
    const store = this.#storeOf();
    if (this.#liveOf(streamId)) throw streamsError("STREAM_LIVE", `delete("${streamId}"): the stream is live; close() or error() it first`);
    const row = store.row(streamId);
    if (!row) return false;
    store.delete(streamId);
    this.#readers?.ended(streamId, "deleted", row.cursor, null);
    this.#wake(streamId);
    return true;
  }

  /** @returns what keeps the object in memory: in-object readers tailing a stream, one line (else none) */
  keepsAwake(): string[] {
    let waiting = 0;
    for (const set of this.#waiters.values()) waiting += set.size;
    return waiting ? [`streams: ${waiting} in-object reader(s) tailing`] : [];
  }

  // ------------------------------------------------------------------ inside

  #statusNow(streamId: string): StreamStatus | null {
    const live = this.#liveOf(streamId);
    if (live) return statusOf(live.row, live.tail);
    const row = this.#storeOf().row(streamId);
    return row ? statusOf(row, null) : null;
  }

  /** @returns the live stream (from memory, or read once after a wake), or `undefined` when it is settled or absent */
  #liveOf(streamId: string): Live | undefined {
    const cached = this.#live.get(streamId);
    if (cached) return cached;
    const store = this.#storeOf();
    const row = store.row(streamId);
    if (!row || row.state !== "streaming") return undefined;
    const live = { row, tail: store.tail(streamId) };
    this.#live.set(streamId, live);
    return live;
  }

  #writable(streamId: string, generation: number, what: string): Live {
    const live = this.#liveOf(streamId);
    if (!live) {
      const row = this.#storeOf().row(streamId);
      throw new StreamClosedError(streamId, row ? `is ${row.state}: cannot ${what} it` : `was deleted: cannot ${what} it`);
    }
    if (live.row.generation !== generation) throw staleWriter(streamId);
    return live;
  }

  #serializeChunk(streamId: string, chunk: unknown): string {
    const json = toJson(chunk, `append to "${streamId}"`);
    if (json.length * 3 > this.maxChunkBytes && utf8Length(json) > this.maxChunkBytes) {
      throw new StreamSerializationError(`append to "${streamId}"`, `the chunk is ${utf8Length(json)} bytes as JSON, over maxChunkBytes (${this.maxChunkBytes}); nothing was stored`);
    }
    return json;
  }

  #serializeMetadata(streamId: string, metadata: unknown): string {
    if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) {
      throw new StreamSerializationError(`open("${streamId}") metadata`, "must be a JSON object");
    }
    const json = toJson(metadata, `open("${streamId}") metadata`);
    if (utf8Length(json) > this.maxChunkBytes) throw new StreamSerializationError(`open("${streamId}") metadata`, `over maxChunkBytes (${this.maxChunkBytes})`);
    return json;
  }

  #wake(streamId: string): void {
    const waiters = this.#waiters.get(streamId);
    if (!waiters) return;
    this.#waiters.delete(streamId);
    for (const wake of waiters) wake();
  }

  /** @returns once the stream is written to (an append, its settlement, its deletion), or rejects with the signal's reason */
  #nextWrite(streamId: string, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let set = this.#waiters.get(streamId);
      if (!set) this.#waiters.set(streamId, (set = new Set()));
      const onAbort = () => {
        set.delete(wake);
        if (set.size === 0 && this.#waiters.get(streamId) === set) this.#waiters.delete(streamId);
        reject(signal?.reason);
      };
      const wake = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      set.add(wake);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  // ---------------------------------------------------------------- retention

  /** After a settlement: arms the shared alarm for the next sweep the retention policy asks for. */
  #retain(): void {
    const work = this.#sweepWork;
    const retention = this.#retention;
    if (!work || !retention) return;
    const { oldest, count } = this.#storeOf().settledSummary();
    const now = Date.now();
    let at: number | undefined;
    if (retention.maxCount !== undefined && count > retention.maxCount) at = now;
    else if (retention.maxAgeMs !== undefined && oldest !== null) at = oldest + retention.maxAgeMs;
    if (at === undefined) return;
    const due = at;
    void (async () => {
      const pending = await work.due();
      if (pending === undefined || pending > due) await work.schedule(due);
    })().catch((error: unknown) => console.error("dokit: Streams could not arm its retention sweep", error));
  }

  /** The alarm's sweep: deletes what the retention policy no longer keeps, then arms the next. */
  async #sweep(): Promise<void> {
    const retention = this.#retention;
    if (!retention) return;
    const store = this.#storeOf();
    const now = Date.now();
    for (;;) {
      const ids = store.expired(retention.maxAgeMs === undefined ? undefined : now - retention.maxAgeMs, retention.maxCount);
      if (ids.length === 0) break;
      for (const id of ids) {
        const row = store.row(id);
        if (!row || row.state === "streaming") continue;
        store.delete(id);
        this.#readers?.ended(id, "deleted", row.cursor, null);
        this.#wake(id);
      }
    }
    this.#retain();
  }

  #storeOf(): StreamStore {
    if (!this.#store) throw new DokitError<StreamsErrorCode>("NOT_INSTALLED", `${OWNER} is not installed: add it with Lifecycle.install(this).use(streams)`);
    return this.#store;
  }

  #lifecycleOf(): Lifecycle {
    this.#storeOf();
    // SAFETY: attach() sets the lifecycle with the store, which #storeOf() just found.
    return this.#lifecycle as Lifecycle;
  }
}

/** The producer's handle: appends and settles as the attempt that opened it. */
class Writer implements StreamWriter {
  readonly streamId: string;
  readonly #streams: Streams;
  readonly #generation: number;

  constructor(streams: Streams, streamId: string, generation: number) {
    this.#streams = streams;
    this.streamId = streamId;
    this.#generation = generation;
  }

  get cursor(): number {
    return this.#streams.cursorOf(this.streamId);
  }

  append(chunk: StreamJson): number {
    return this.#streams.appendAs(this.streamId, this.#generation, chunk);
  }

  close(options?: StreamSettleOptions): void {
    this.#streams.settleAs(this.streamId, this.#generation, "completed", null, options);
  }

  error(reason?: string, options?: StreamSettleOptions): void {
    this.#streams.settleAs(this.streamId, this.#generation, "errored", reason === undefined ? null : String(reason), options);
  }
}

const cursorOf = (tail: Tail | null): number => (tail ? tail.first + tail.count : 0);

function staleWriter(streamId: string): DokitError<StreamsErrorCode> {
  return streamsError("STALE_WRITER", `stream "${streamId}" was reopened by a later open(): this writer belongs to an earlier attempt and can no longer write to it`);
}

function toJson(value: unknown, context: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new StreamSerializationError(context, `not JSON-serializable (${error instanceof Error ? error.message : String(error)}); nothing was stored`);
  }
  if (json === undefined) throw new StreamSerializationError(context, `not JSON-serializable (${typeof value}); nothing was stored`);
  return json;
}

function checkId(streamId: unknown): void {
  if (typeof streamId !== "string" || streamId.length === 0 || streamId.length > 512) {
    throw streamsError("INVALID_ARGUMENT", `a stream id is a string of 1 to 512 characters, got ${typeof streamId === "string" ? `${streamId.length} characters` : typeof streamId}`);
  }
}

function inRange(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw streamsError("INVALID_ARGUMENT", `${name} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}


