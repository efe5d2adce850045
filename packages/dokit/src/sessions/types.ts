// The shapes dokit/sessions reads and writes: the reference's (agents/sessions) names and fields,
// so code written for it type-checks against these.

/**
 * One part of a message. The AI SDK's `UIMessagePart` fits this shape: only the fields Sessions
 * looks at are named, and any other field is kept as written.
 */
export interface SessionMessagePart {
  type: string;
  text?: string;
  reasoning?: string;
  toolCallId?: string;
  toolName?: string;
  input?: unknown;
  output?: unknown;
  state?: string;
  result?: unknown;
  /** A file part's IANA media type; a non-`text/` type with a `data:` url is stored once by content hash. */
  mediaType?: string;
  /** A file part's payload: a `data:` URL (stored apart from the message) or a remote URL (kept inline). */
  url?: string;
  /** A file part's original name. */
  filename?: string;
}

/** One message. The AI SDK's `UIMessage` is one, as it is. */
export interface SessionMessage {
  id: string;
  role: string;
  parts: SessionMessagePart[];
  metadata?: unknown;
  createdAt?: Date;
}

/** A `search()` hit. */
export interface SearchResult {
  id: string;
  role: string;
  /** The message's text parts, joined by a space. */
  content: string;
  /** When the row was written, ISO 8601. */
  createdAt?: string;
  sessionId?: string;
}

/** A stored compaction overlay: `summary` stands for the messages from `fromMessageId` to `toMessageId` on reads. */
export interface StoredCompaction {
  id: string;
  summary: string;
  fromMessageId: string;
  toMessageId: string;
  /** ISO 8601. */
  createdAt: string;
}

/** One message of a path, without its content. */
export interface SessionRowStat {
  id: string;
  role: string;
  /** What the message takes once read: its JSON (every row it was split across) and the media payloads it points at. */
  bytes: number;
  /** The token estimate stamped when the row was written. */
  tokenEstimate: number;
}

/** What `getRecentHistory()` returns. */
export interface RecentHistoryResult {
  /** The newest messages of the path whose bytes fit the budget (always the leaf), root → leaf, overlays inside the window applied. */
  messages: SessionMessage[];
  /** Whether older messages were left out. */
  truncated: boolean;
  /** The bytes of the whole path. */
  totalContentBytes: number;
}

/** What an append (or upsert) returns. */
export interface AppendResult {
  /** `false` when the id was already stored: nothing was written. */
  inserted: boolean;
  /** The message as stored (sanitized; the stored row when the id existed). */
  message: SessionMessage;
}

/** One event of the change feed, dispatched in write order after the write committed. */
export type SessionChangeEvent =
  | { type: "append"; sessionId: string; message: SessionMessage; parentId?: string | null; inserted: boolean }
  | { type: "update"; sessionId: string; message: SessionMessage }
  | { type: "delete"; sessionId: string; messageIds: string[] }
  | { type: "clear"; sessionId: string }
  | { type: "compact"; sessionId: string }
  | { type: "import"; sessionId: string; message: SessionMessage; parentId: string | null }
  | { type: "compaction"; sessionId: string; compaction: StoredCompaction };

/** A change-feed listener; an async one is awaited before the next event is dispatched. */
export type SessionChangeListener = (event: SessionChangeEvent) => void | Promise<void>;

/** Options of history reads. */
export interface HistoryReadOptions {
  /** Read the path that ends at this message instead of the active leaf. */
  leafId?: string | null;
  /** Stops a streamed read between windows. */
  signal?: AbortSignal;
  /** Leaf → root instead of root → leaf; the newest window is read first. */
  newestFirst?: boolean;
}

/** Options of `historyBatches()`. */
export interface HistoryBatchReadOptions extends HistoryReadOptions {
  /** Most messages per batch (default 50). */
  batchSize?: number;
  /** Most bytes per batch (default 4 MiB); a larger message comes alone. */
  maxBatchBytes?: number;
}

/** Options of `new Sessions()`. */
export interface SessionsOptions {
  /** Metadata keys only server code may write: removed from writes with `source: "client"`. */
  readonly reservedMetadataKeys?: readonly string[];
  /**
   * The largest message, as JSON in UTF-8 bytes, that a write with `source: "client"` (and every
   * write from a WebSocket client) may store: 1 byte to 64 MiB, default 1 MiB. Server writes have no bound.
   */
  readonly maxClientMessageBytes?: number;
  /**
   * Which sessions a WebSocket connection may read and write (see docs/sessions.md, "Live history"):
   * `"read"`, `"write"` or `false`. Default: every connection may read every session, and write none.
   */
  readonly access?: SessionAccess;
}

/** Decides what a connection may do with a session: `"write"` (read and write), `"read"`, or `false`. */
export type SessionAccess = (
  connection: import("../lifecycle/connection").Connection,
  sessionId: string,
) => "read" | "write" | false;

/** Who a write comes from. */
export interface WriteOptions {
  /** `"client"`: untrusted input (reserved metadata removed, size bounded). Default `"server"`. */
  source?: "client" | "server";
}

/** Options of an append. */
export interface AppendOptions extends WriteOptions {
  /** Omitted: after the active leaf. `null`: a new root. An id: a child of that message (a root when it is not in the session). */
  parentId?: string | null;
}
