import { DokitError } from "../lifecycle/errors";
import { type CompactionFunction, type CompactResult, COMPACTION_PREFIX, overlayMessage, planOverlays, type Span } from "./compaction";
import type { SessionsErrorCode } from "./errors";
import { checkMessage, type Prepared, prepare, sanitize, stripReserved } from "./message";
import type { Path, PathRow, SessionStore } from "./store";
import type {
  AppendOptions,
  AppendResult,
  HistoryBatchReadOptions,
  HistoryReadOptions,
  RecentHistoryResult,
  SearchResult,
  SessionChangeEvent,
  SessionMessage,
  SessionRowStat,
  StoredCompaction,
  WriteOptions,
} from "./types";

/** What every handle of one Sessions shares: its storage, its policy and its change feed. */
export interface SessionsCore {
  store(): SessionStore;
  readonly reserved: ReadonlySet<string>;
  readonly maxClientMessageBytes: number;
  /** Dispatches an event to the change feed, in write order. */
  notify(event: SessionChangeEvent): Promise<void>;
  /** Reports a failure that must not fail the call (a listener, an automatic compaction). */
  report(where: string, error: unknown): void;
  /** Adds a change-feed listener. @returns the function that removes it */
  subscribe(listener: (event: SessionChangeEvent) => void | Promise<void>): () => void;
}

/** How a host keeps an array of messages in step with one session's change feed. */
export interface SessionMirrorOptions<M extends { id: string }> {
  /** The cached messages; read on every event, so a host may reassign its array. */
  get(): M[];
  /** Installs a new array (after a delete, or an empty one after a clear). */
  set(messages: M[]): void;
  /** The cached form of a stored message (default: the message). */
  transform?(message: SessionMessage): M;
  /** Handles an event instead of the default reduction; `true` when it did. */
  intercept?(event: SessionChangeEvent): boolean | Promise<boolean>;
  /** After an append or update was applied: the entry written, and the one it replaced. */
  onApplied?(event: Extract<SessionChangeEvent, { type: "append" | "update" }>, message: M, previous: M | undefined): void;
}

/** Synchronous writes for a caller's own SQLite transaction (see {@link Session.sync}). */
export interface SessionSyncWriter {
  /**
   * Appends or updates a message at once, inside the caller's transaction.
   * @returns the result, and `after`, to call once the transaction committed: it dispatches the change feed (and any automatic compaction)
   */
  upsert(message: SessionMessage, options?: AppendOptions): { result: AppendResult; after: () => Promise<void> };
  /** Call when the caller's transaction rolled back after an upsert: what memory holds of storage is read again. */
  abandon(): void;
}

/** Messages per content window of a read. */
const WINDOW_ROWS = 50;
/** Messages per step of a newest-first read: a loop looking for something recent usually stops within a few. */
const NEWEST_WINDOW_ROWS = 8;
/** Bytes per content window of a read. */
const WINDOW_BYTES = 4 * 1024 * 1024;

/** What a read yields: a message, and the bytes it counts for (its stored bytes, or an overlay's summary length). */
type Entry = { message: SessionMessage; bytes: number };

/**
 * One conversation: a tree of messages in the object's SQLite, with streamed and byte-budgeted reads,
 * compaction overlays, search and a change feed. Made by `sessions.session(id)` (cached per id).
 */
export class Session {
  /** The session's id ("" by default). */
  readonly sessionId: string;
  readonly #core: SessionsCore;
  #compaction: CompactionFunction | undefined;
  #threshold: number | undefined;

  /** Made by `Sessions.session()` only. */
  constructor(sessionId: string, core: SessionsCore) {
    this.sessionId = sessionId;
    this.#core = core;
  }

  // ------------------------------------------------------------------ configuration

  /** Registers the function `compact()` summarizes with. */
  onCompaction(fn: CompactionFunction): this {
    this.#compaction = fn;
    return this;
  }

  /** Compacts after an append once the path's estimated tokens pass `tokenThreshold` (needs `onCompaction()`). */
  compactAfter(tokenThreshold: number): this {
    this.#threshold = tokenThreshold;
    return this;
  }

  /**
   * Keeps an array of messages in step with this session: an append or update replaces the entry with its
   * id (or adds one), a delete removes, a clear empties.
   * @returns the function that stops it
   */
  mirror<M extends { id: string }>(options: SessionMirrorOptions<M>): () => void {
    return this.#core.subscribe(async (event) => {
      if (event.sessionId !== this.sessionId) return;
      if (options.intercept && (await options.intercept(event))) return;
      switch (event.type) {
        case "append":
        case "update": {
          // SAFETY: without transform, the cached form is the stored message.
          const entry = options.transform ? options.transform(event.message) : (event.message as unknown as M);
          const messages = options.get();
          const at = messages.findIndex((message) => message.id === entry.id);
          const previous = at >= 0 ? messages[at] : undefined;
          if (at >= 0) messages[at] = entry;
          else messages.push(entry);
          options.onApplied?.(event, entry, previous);
          break;
        }
        case "delete": {
          const gone = new Set(event.messageIds);
          options.set(options.get().filter((message) => !gone.has(message.id)));
          break;
        }
        case "clear":
          options.set([]);
          break;
        default:
          break;
      }
    });
  }

  // ------------------------------------------------------------------ reads

  /** Streams the path (root → leaf, or leaf → root with `newestFirst`), overlays applied, one bounded window in memory at a time. */
  async *history(options: HistoryReadOptions = {}): AsyncGenerator<SessionMessage, void, undefined> {
    for await (const { message } of this.#read(options)) yield message;
  }

  /** Streams the path in batches bounded by count and bytes; a message larger than `maxBatchBytes` comes alone. */
  async *historyBatches(options: HistoryBatchReadOptions = {}): AsyncGenerator<SessionMessage[], void, undefined> {
    const size = Math.max(1, options.batchSize ?? 50);
    const maxBytes = Math.max(1, options.maxBatchBytes ?? WINDOW_BYTES);
    let batch: SessionMessage[] = [];
    let bytes = 0;
    for await (const entry of this.#read(options)) {
      if (batch.length > 0 && (batch.length >= size || bytes + entry.bytes > maxBytes)) {
        yield batch;
        batch = [];
        bytes = 0;
      }
      batch.push(entry.message);
      bytes += entry.bytes;
    }
    if (batch.length > 0) yield batch;
  }

  /** @returns the whole path in one array (prefer `history()` for a long one) */
  async getHistory(options: HistoryReadOptions = {}): Promise<SessionMessage[]> {
    const messages: SessionMessage[] = [];
    for await (const { message } of this.#read(options)) messages.push(message);
    return messages;
  }

  /**
   * The newest messages of the path whose bytes fit `maxContentBytes` (always at least the leaf).
   * @param options - `{ leafId }`; a number (the reference's old minimum count) is accepted and ignored: the budget is a hard bound
   */
  async getRecentHistory(maxContentBytes: number, options?: Pick<HistoryReadOptions, "leafId"> | number): Promise<RecentHistoryResult> {
    const leafId = typeof options === "object" ? options.leafId : undefined;
    const { ids, sizes } = this.#store().path(this.sessionId, leafId);
    let total = 0;
    for (const size of sizes) total += size;
    let start = ids.length;
    let used = 0;
    while (start > 0) {
      const size = sizes[start - 1] as number;
      if (start < ids.length && used + size > maxContentBytes) break;
      used += size;
      start--;
    }
    // Overlays are planned over the window alone: one reaching outside it is not shown.
    const window: Path = start === 0 ? { ids, sizes } : { ids: ids.slice(start), sizes: sizes.subarray(start) };
    const messages: SessionMessage[] = [];
    for await (const { message } of this.#stream(window, this.#spans(window.ids), {})) messages.push(message);
    return { messages, truncated: start > 0, totalContentBytes: total };
  }

  /** @returns each message of the path (root → leaf) with its bytes and token estimate, reading no content */
  async getHistoryRowStats(leafId?: string | null): Promise<SessionRowStat[]> {
    return this.#store().stats(this.sessionId, leafId);
  }

  /** @returns a stored message, or `null` */
  async getMessage(id: string): Promise<SessionMessage | null> {
    return this.#store().get(this.sessionId, id);
  }

  /** @returns the active leaf (the most recently written message), or `null` for an empty session */
  async getLatestLeaf(): Promise<SessionMessage | null> {
    const leaf = this.#store().latestLeafId(this.sessionId);
    return leaf === null ? null : this.#store().get(this.sessionId, leaf);
  }

  /** @returns the children of a message, oldest first: the branches that start after it */
  async getBranches(messageId: string): Promise<SessionMessage[]> {
    return this.#store().children(this.sessionId, messageId);
  }

  /** Full-text search over the session's text parts (SQLite FTS5); the index is made by the first search of the object. */
  async search(query: string, options: { limit?: number } = {}): Promise<SearchResult[]> {
    return this.#store().search(this.sessionId, query, Math.max(1, Math.min(options.limit ?? 20, 1000)));
  }

  /** @returns the session's overlays, oldest first */
  async getCompactions(): Promise<StoredCompaction[]> {
    return this.#store().compactions(this.sessionId);
  }

  /** The path's estimated tokens: stamped row estimates, with each overlay's summary standing for its span. */
  tokenEstimate(leafId?: string | null): number {
    const { ids, sizes } = this.#store().path(this.sessionId, leafId, "tokens");
    let tokens = 0;
    let at = 0;
    for (const span of this.#spans(ids)) {
      for (; at < span.start; at++) tokens += sizes[at] as number;
      tokens += Math.ceil(span.compaction.summary.length / 4) + 4;
      at = span.end + 1;
    }
    for (; at < ids.length; at++) tokens += sizes[at] as number;
    return tokens;
  }

  // ------------------------------------------------------------------ writes

  /**
   * Appends a message: after the active leaf, as a root (`parentId: null`) or after a given message.
   * An id already stored writes nothing and returns the stored row (`inserted: false`); an overlay id
   * (`compaction_…`) is never stored.
   * @throws DokitError MESSAGE_TOO_LARGE for a client message over `maxClientMessageBytes`, INVALID_MESSAGE for a malformed one; nothing is stored then
   */
  async appendMessage(message: SessionMessage, options: AppendOptions = {}): Promise<AppendResult> {
    const { result, event } = this.#append(message, options);
    if (event) await this.#after(event);
    return result;
  }

  /**
   * Rewrites a stored message (its parent stays).
   * @returns the stored form, or `null` when the id is not in this session; an unchanged message writes nothing and dispatches nothing
   */
  async updateMessage(message: SessionMessage, options: WriteOptions = {}): Promise<SessionMessage | null> {
    if (isOverlayId(message)) return null;
    const prepared = this.#prepare(message, options.source);
    const changed = this.#store().rewrite(this.sessionId, prepared);
    if (changed === undefined) return null;
    if (changed) await this.#after({ type: "update", sessionId: this.sessionId, message: prepared.message });
    return prepared.message;
  }

  /** Updates the message when its id is stored, else appends it. */
  async upsertMessage(message: SessionMessage, options: AppendOptions = {}): Promise<AppendResult> {
    const { result, event } = this.#upsert(message, options);
    if (event) await this.#after(event);
    return result;
  }

  /**
   * Synchronous writes for code that must commit a message inside its own SQLite transaction (a stream's
   * cutover: the finished message lands and the stream's rows go in one commit). Call `after()` once the
   * transaction committed; `abandon()` if it rolled back.
   */
  sync(): SessionSyncWriter {
    return {
      upsert: (message, options = {}) => {
        const { result, event } = this.#upsert(message, options);
        return { result, after: () => (event ? this.#after(event) : Promise.resolve()) };
      },
      abandon: () => this.#store().forget(),
    };
  }

  /** The reference's name for {@link Session.sync}, kept so code written for it runs. */
  __DO_NOT_USE_WILL_BREAK__sync(): SessionSyncWriter {
    return this.sync();
  }

  /**
   * Writes one historical message as it is, with an explicit parent and time (moving a conversation
   * between objects). Dispatches `import`, never `append`; an id already stored writes nothing.
   */
  async importMessage(message: SessionMessage, options: { parentId: string | null; createdAt: number }): Promise<void> {
    const prepared = this.#prepare(message, "server");
    const store = this.#store();
    if (store.exists(this.sessionId, message.id)) return;
    const parentId = options.parentId !== null && store.exists(this.sessionId, options.parentId) ? options.parentId : null;
    store.insert(this.sessionId, prepared, parentId, options.createdAt);
    await this.#core.notify({ type: "import", sessionId: this.sessionId, message: prepared.message, parentId });
  }

  /** Deletes messages; each surviving child of a deleted message is re-parented to the nearest surviving ancestor. */
  async deleteMessages(messageIds: string[]): Promise<void> {
    const deleted = this.#store().delete(this.sessionId, messageIds);
    if (deleted.length > 0) await this.#core.notify({ type: "delete", sessionId: this.sessionId, messageIds: deleted });
  }

  /** Deletes every message, overlay and payload reference of the session. */
  async clearMessages(): Promise<void> {
    this.#store().clear(this.sessionId);
    await this.#core.notify({ type: "clear", sessionId: this.sessionId });
  }

  /** Stores a summary read in place of the messages from `fromMessageId` to `toMessageId`; the rows stay. */
  async addCompaction(summary: string, fromMessageId: string, toMessageId: string): Promise<StoredCompaction> {
    const compaction = this.#storeCompaction(summary, fromMessageId, toMessageId);
    await this.#core.notify({ type: "compaction", sessionId: this.sessionId, compaction });
    return compaction;
  }

  /**
   * Summarizes the path (or the one ending at `leafId`) with the `onCompaction()` function and stores the overlay.
   * @returns what was stored, or `null` when the function found nothing to summarize or failed (reported, not thrown)
   * @throws DokitError NO_COMPACTION without `onCompaction()`
   */
  async compact(leafId?: string | null): Promise<CompactResult | null> {
    const fn = this.#compaction;
    if (!fn) {
      throw new DokitError<SessionsErrorCode>("NO_COMPACTION", `session "${this.sessionId}" has no compaction function: call onCompaction() first`);
    }
    let result: CompactResult | null;
    try {
      result = await fn(await this.getHistory({ leafId }));
    } catch (error) {
      this.#core.report("compaction", error);
      return null;
    }
    if (!result) return null;
    this.#storeCompaction(result.summary, result.fromMessageId, result.toMessageId);
    await this.#core.notify({ type: "compact", sessionId: this.sessionId });
    return result;
  }

  // ------------------------------------------------------------------ internals

  #store(): SessionStore {
    return this.#core.store();
  }

  #prepare(message: SessionMessage, source: WriteOptions["source"]): Prepared {
    checkMessage(message);
    let next = sanitize(message);
    if (source === "client") next = stripReserved(next, this.#core.reserved);
    const prepared = prepare(next);
    if (source === "client" && prepared.bytes > this.#core.maxClientMessageBytes) {
      throw new DokitError<SessionsErrorCode>(
        "MESSAGE_TOO_LARGE",
        `a client message of ${prepared.bytes} bytes is over this session's limit of ${this.#core.maxClientMessageBytes} (maxClientMessageBytes); nothing was stored`,
      );
    }
    return prepared;
  }

  #append(message: SessionMessage, options: AppendOptions): { result: AppendResult; event?: SessionChangeEvent } {
    if (isOverlayId(message)) return { result: { inserted: false, message } };
    const prepared = this.#prepare(message, options.source);
    const store = this.#store();
    const stored = store.get(this.sessionId, message.id);
    if (stored) {
      return { result: { inserted: false, message: stored }, event: { type: "append", sessionId: this.sessionId, message: stored, inserted: false } };
    }
    let parentId: string | null;
    if (options.parentId === undefined) parentId = store.latestLeafId(this.sessionId);
    else if (options.parentId === null) parentId = null;
    else parentId = store.exists(this.sessionId, options.parentId) ? options.parentId : null;
    store.insert(this.sessionId, prepared, parentId, Date.now());
    return {
      result: { inserted: true, message: prepared.message },
      event: { type: "append", sessionId: this.sessionId, message: prepared.message, parentId, inserted: true },
    };
  }

  #upsert(message: SessionMessage, options: AppendOptions): { result: AppendResult; event?: SessionChangeEvent } {
    if (isOverlayId(message)) return { result: { inserted: false, message } };
    const store = this.#store();
    if (!store.exists(this.sessionId, message.id)) return this.#append(message, options);
    const prepared = this.#prepare(message, options.source);
    const changed = store.rewrite(this.sessionId, prepared);
    const result = { inserted: false, message: prepared.message };
    return changed ? { result, event: { type: "update", sessionId: this.sessionId, message: prepared.message } } : { result };
  }

  /** After a committed write: the change feed, then an automatic compaction when the path passed its threshold. */
  async #after(event: SessionChangeEvent): Promise<void> {
    await this.#core.notify(event);
    if (event.type !== "append" || !event.inserted || this.#threshold === undefined || !this.#compaction) return;
    try {
      if (this.tokenEstimate() > this.#threshold) await this.compact();
    } catch (error) {
      this.#core.report("compaction", error);
    }
  }

  #storeCompaction(summary: string, fromMessageId: string, toMessageId: string): StoredCompaction {
    const store = this.#store();
    const known = new Map(store.compactions(this.sessionId).map((compaction) => [`${COMPACTION_PREFIX}${compaction.id}`, compaction]));
    // A span that starts or ends at an earlier overlay starts or ends where that overlay's span does.
    const from = known.get(fromMessageId)?.fromMessageId ?? fromMessageId;
    const to = known.get(toMessageId)?.toMessageId ?? toMessageId;
    return store.addCompaction(this.sessionId, summary, from, to, Date.now());
  }

  /** @returns the spans of a path its session's overlays cover */
  #spans(ids: readonly string[]): Span[] {
    return ids.length === 0 ? [] : planOverlays(ids, this.#store().compactions(this.sessionId));
  }

  async *#read(options: HistoryReadOptions): AsyncGenerator<Entry, void, undefined> {
    const store = this.#store();
    if (options.newestFirst && !store.hasCompactions(this.sessionId)) {
      // Leaf first without overlays to plan: walk parent pointers a window at a time, so a loop
      // that stops early never reads the older rows, not even their ids.
      let next = options.leafId ?? store.latestLeafId(this.sessionId);
      while (next !== null) {
        const rows = store.walk(this.sessionId, next, NEWEST_WINDOW_ROWS);
        if (rows.length === 0) return;
        const step: Path = { ids: rows.map((row) => row.id), sizes: Uint32Array.from(rows, (row) => row.bytes) };
        yield* this.#stream(step, [], { signal: options.signal });
        next = (rows[rows.length - 1] as PathRow).parentId;
      }
      return;
    }
    // The whole path is held as ids and a typed array of sizes; content only a window at a time.
    const path = store.path(this.sessionId, options.leafId);
    yield* this.#stream(path, this.#spans(path.ids), options);
  }

  /**
   * Reads a path's content in windows of at most WINDOW_ROWS messages and WINDOW_BYTES, each overlay
   * standing for its span; from the leaf with `newestFirst`. Only the window's messages are held.
   */
  async *#stream(path: Path, spans: readonly Span[], options: HistoryReadOptions): AsyncGenerator<Entry, void, undefined> {
    const { ids, sizes } = path;
    const back = options.newestFirst === true;
    // Walking forward an overlay is met at its first row, walking back at its last.
    const spanAt = new Map<number, Span>();
    for (const span of spans) spanAt.set(back ? span.end : span.start, span);
    let at = back ? ids.length - 1 : 0;
    while (back ? at >= 0 : at < ids.length) {
      options.signal?.throwIfAborted();
      // Each entry: a row's index in the path, or an overlay.
      const window: (number | Span)[] = [];
      const load: string[] = [];
      let bytes = 0;
      while ((back ? at >= 0 : at < ids.length) && window.length < WINDOW_ROWS) {
        const span = spanAt.get(at);
        const size = span ? span.compaction.summary.length : (sizes[at] as number);
        if (window.length > 0 && bytes + size > WINDOW_BYTES) break;
        bytes += size;
        if (span) {
          window.push(span);
          at = back ? span.start - 1 : span.end + 1;
        } else {
          window.push(at);
          load.push(ids[at] as string);
          at += back ? -1 : 1;
        }
      }
      const loaded = new Map(this.#store().load(this.sessionId, load).map((message) => [message.id, message]));
      for (const entry of window) {
        if (typeof entry !== "number") {
          yield { message: overlayMessage(entry.compaction), bytes: entry.compaction.summary.length };
          continue;
        }
        const message = loaded.get(ids[entry] as string);
        if (message) yield { message, bytes: sizes[entry] as number };
      }
    }
  }
}

function isOverlayId(message: SessionMessage): boolean {
  return typeof message?.id === "string" && message.id.startsWith(COMPACTION_PREFIX);
}
