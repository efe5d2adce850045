// Readers of streams over the object's WebSockets. A connection sends
// {"type":"dokit_stream_read","stream","from"}: it is sent every stored chunk from
// `from` at once (synchronously, so no append can slip between the replay and the
// tail), an up-to-date frame, and then each append as it is stored, until the
// stream settles or is deleted (the end frame).
//
// Hibernation: a tailing reader is one row of dokit_stream_readers (stream,
// connection), nothing in memory that must survive. The object may hibernate
// while readers wait; the next append wakes it, reads the stream's readers once,
// and sends them the chunk. Every chunk before it reached them before the object
// slept: the replay and each append are sent in the same synchronous block that
// stores or reads them. A reader whose socket dropped reconnects and reads again
// from the last cursor it saw (the dokit client does), so nothing depends on a
// delivery the platform lost.
//
// Pacing: a replay that sent chunks ends its round with a random token, and the
// connection's read frames are ignored until it sends {"type":"dokit_stream_ack","token",
// "reads"}. Frames arrive in order, so a client holds the token only once it has
// received the whole round: what a connection that does not read can make the
// runtime queue is one round, however many read frames it sends. The ack lists the
// reads the client still waits on (those ignored meanwhile), so nothing is held for
// it here but the token, and an ack after a restart (the token forgotten) is served too.
import type { Claims } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { isDokitError } from "../lifecycle/errors";
import { trySend } from "../frames/send";
import { DOKIT_ERROR } from "../protocol/dokit-error";
import { STREAM_ACK, STREAM_CANCEL, STREAM_CHUNKS, STREAM_END, STREAM_MORE, STREAM_READ, STREAM_UP_TO_DATE, type StreamEndFrame, type StreamWireErrorCode } from "../protocol/streams";
import type { WebSockets } from "../websockets/websockets";
import type { StreamStore } from "./store";
import type { Streams } from "./streams";
import type { StreamsOptions } from "./types";

const SCHEMA = [
  "CREATE TABLE IF NOT EXISTS dokit_stream_readers (stream TEXT NOT NULL, connection TEXT NOT NULL, PRIMARY KEY (stream, connection)) WITHOUT ROWID",
  "CREATE INDEX IF NOT EXISTS dokit_stream_readers_connection ON dokit_stream_readers (connection)",
];

/** A replay frame carries at most this many bytes of chunks (one chunk larger than it goes alone). */
const REPLAY_FRAME_BYTES = 256 * 1024;
/**
 * One read frame replays at most about this many bytes; the rest waits for the client to ask again
 * (the `dokit_stream_more` frame), so a slow reader of a long stream never has more than this
 * queued in the object.
 */
export const REPLAY_ROUND_BYTES = 4 * 1024 * 1024;

/** The WebSocket readers of one object's streams. */
export class StreamReaders {
  readonly #streams: Streams;
  readonly #store: StreamStore;
  readonly #sockets: WebSockets;
  readonly #options: StreamsOptions;
  readonly #maxReads: number;
  #sql: SqlStorage | undefined;
  #ready = false;
  /** Each tailed stream's readers by connection id, as this instance knows them (read from storage once per stream after a wake). */
  readonly #byStream = new Map<string, Map<string, Connection | undefined>>();
  /** The token each connection owes an ack for (the last replay round it was sent), by connection id; in memory only. */
  readonly #owed = new Map<string, string>();

  constructor(streams: Streams, store: StreamStore, sockets: WebSockets, options: StreamsOptions) {
    this.#streams = streams;
    this.#store = store;
    this.#sockets = sockets;
    this.#options = options;
    this.#maxReads = options.maxReadsPerConnection ?? 16;
  }

  attach(claims: Claims): void {
    this.#sql = claims.lifecycle.ctx.storage.sql;
    // The readers' table exists before any frame or append (idempotent DDL, once per start or wake).
    claims.onStart(() => void this.#sqlOf());
    claims.use(this.#sockets);
    this.#sockets.use({
      onClose: (connection) => this.#closed(connection),
      // An error ends the socket as a close does.
      onError: (connection) => this.#closed(connection),
    });
    // {"type":"dokit_stream_read","stream":<id>,"from"?:<cursor>}
    claims.frame(STREAM_READ, (connection, frame) => this.#read(connection, frame));
    // {"type":"dokit_stream_cancel","stream":<id>}
    claims.frame(STREAM_CANCEL, (connection, frame) => this.#cancel(connection, frame));
    // {"type":"dokit_stream_ack","token":<token>,"reads"?:[{"stream":<id>,"from":<cursor>}]}
    claims.frame(STREAM_ACK, (connection, frame) => this.#ack(connection, frame));
  }

  /** A chunk was stored at `seq` (`json`: its JSON text): every tailing reader of the stream is sent it. */
  appended(streamId: string, seq: number, json: string): void {
    const readers = this.#readersOf(streamId);
    if (readers.size === 0) return;
    const frame = `{"type":"${STREAM_CHUNKS}","stream":${JSON.stringify(streamId)},"chunks":[{"seq":${seq},"chunk":${json}}]}`;
    for (const [id, known] of readers) {
      const connection = known ?? this.#sockets.getConnection(id);
      if (!connection) {
        // Its socket is gone (its close was not heard here): forget the reader.
        readers.delete(id);
        this.#sqlOf().exec("DELETE FROM dokit_stream_readers WHERE stream = ? AND connection = ?", streamId, id);
        continue;
      }
      if (!known) readers.set(id, connection);
      trySend(connection, frame);
    }
  }

  /** The stream settled or was deleted: its readers are sent the end frame and forgotten. */
  ended(streamId: string, state: StreamEndFrame["state"], cursor: number, reason: string | null): void {
    const readers = this.#readersOf(streamId);
    this.#byStream.delete(streamId);
    if (readers.size === 0) return;
    this.#sqlOf().exec("DELETE FROM dokit_stream_readers WHERE stream = ?", streamId);
    const frame = JSON.stringify(endFrame(streamId, state, cursor, reason));
    for (const [id, known] of readers) {
      const connection = known ?? this.#sockets.getConnection(id);
      if (connection) trySend(connection, frame);
    }
  }

  // ------------------------------------------------------------------ inside

  #read(connection: Connection, frame: Record<string, unknown>): void {
    // A round is unacknowledged: the ack asks for this read again.
    if (this.#owed.has(connection.id)) return;
    const streamId = frame.stream;
    if (typeof streamId !== "string" || streamId.length === 0 || streamId.length > 512) {
      return refuse(connection, "INVALID_STREAM_FRAME", "dokit_stream_read needs a stream id (a string of 1 to 512 characters)", typeof streamId === "string" ? streamId : "");
    }
    const from = frame.from ?? 0;
    if (typeof from !== "number" || !Number.isSafeInteger(from) || from < 0) {
      return refuse(connection, "INVALID_STREAM_FRAME", "from must be a cursor (an integer from 0)", streamId);
    }
    if (this.#options.canRead && !this.#options.canRead(connection, streamId)) {
      return refuse(connection, "STREAM_READ_REFUSED", "this connection may not read this stream", streamId);
    }
    const sql = this.#sqlOf();
    const readers = this.#readersOf(streamId);
    if (!readers.has(connection.id)) {
      const reading = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM dokit_stream_readers WHERE connection = ?", connection.id).one().n;
      if (reading >= this.#maxReads) return refuse(connection, "TOO_MANY_READS", `a connection reads at most ${this.#maxReads} streams at once`, streamId);
    }
    let next: number;
    try {
      next = this.#streams.checkFrom(streamId, from);
    } catch (error) {
      if (isDokitError(error, "STREAM_NOT_FOUND")) return refuse(connection, "STREAM_NOT_FOUND", `stream "${streamId}" does not exist (never opened, or deleted)`, streamId);
      if (isDokitError(error, "CURSOR_PAST_END")) return refuse(connection, "CURSOR_PAST_END", `from ${from} is past the stream's end`, streamId);
      throw error;
    }
    // The replay, then the tail, in this one synchronous block.
    const replayed = this.#replay(connection, streamId, next);
    next = replayed.next;
    // A round that sent chunks ends with a token; nothing more is replayed to the connection until it is acknowledged.
    const token = replayed.next > from ? crypto.randomUUID() : undefined;
    if (token !== undefined) this.#owed.set(connection.id, token);
    if (!replayed.complete) {
      // More is stored than one round sends: the client asks again from `next` once it has these.
      this.#forget(streamId, connection.id);
      trySend(connection, JSON.stringify({ type: STREAM_MORE, stream: streamId, cursor: next, token }));
      return;
    }
    const status = this.#streams.statusSync(streamId);
    trySend(connection, JSON.stringify({ type: STREAM_UP_TO_DATE, stream: streamId, cursor: next, token }));
    if (!status || status.state !== "streaming") {
      this.#forget(streamId, connection.id);
      // SAFETY: a status that is not streaming (checked above) is completed or errored.
      trySend(connection, JSON.stringify(endFrame(streamId, status ? (status.state as "completed" | "errored") : "deleted", next, status?.error ?? null)));
      return;
    }
    if (!readers.has(connection.id)) sql.exec("INSERT OR IGNORE INTO dokit_stream_readers (stream, connection) VALUES (?, ?)", streamId, connection.id);
    readers.set(connection.id, connection);
  }

  /**
   * Sends the stored chunks from `from`, in frames of at most REPLAY_FRAME_BYTES, up to about REPLAY_ROUND_BYTES.
   * @returns the next cursor, and whether every stored chunk was sent
   */
  #replay(connection: Connection, streamId: string, from: number): { next: number; complete: boolean } {
    let next = from;
    let sent = 0;
    const head = `{"type":"${STREAM_CHUNKS}","stream":${JSON.stringify(streamId)},"chunks":[`;
    for (;;) {
      const block = this.#store.blockAt(streamId, next);
      if (!block) return { next, complete: true };
      if (sent >= REPLAY_ROUND_BYTES) return { next, complete: false };
      let parts: string[] = [];
      let bytes = 0;
      for (let i = next - block.first; i < block.chunks.length; i++) {
        const part = `{"seq":${block.first + i},"chunk":${JSON.stringify(block.chunks[i])}}`;
        if (bytes > 0 && bytes + part.length > REPLAY_FRAME_BYTES) {
          trySend(connection, `${head}${parts.join(",")}]}`);
          sent += bytes;
          next = block.first + i;
          parts = [];
          bytes = 0;
          if (sent >= REPLAY_ROUND_BYTES) return { next, complete: false };
        }
        parts.push(part);
        bytes += part.length;
      }
      if (parts.length > 0) trySend(connection, `${head}${parts.join(",")}]}`);
      sent += bytes;
      next = block.first + block.chunks.length;
    }
  }

  /**
   * An ack: with the token owed (or none owed), the reads it lists are served in order, until one
   * starts a new round (the rest are asked for again by its ack). A wrong or missing token changes nothing.
   */
  #ack(connection: Connection, frame: Record<string, unknown>): void {
    const owed = this.#owed.get(connection.id);
    if (owed !== undefined) {
      if (frame.token !== owed) return;
      this.#owed.delete(connection.id);
    }
    if (!Array.isArray(frame.reads)) return;
    for (const read of frame.reads) {
      if (this.#owed.has(connection.id)) return;
      // SAFETY: #read checks every field it uses.
      this.#read(connection, typeof read === "object" && read !== null ? (read as Record<string, unknown>) : {});
    }
  }

  #cancel(connection: Connection, frame: Record<string, unknown>): void {
    if (typeof frame.stream !== "string") return refuse(connection, "INVALID_STREAM_FRAME", "dokit_stream_cancel needs a stream id", "");
    this.#forget(frame.stream, connection.id);
  }

  #forget(streamId: string, connectionId: string): void {
    const readers = this.#byStream.get(streamId);
    readers?.delete(connectionId);
    if (readers?.size === 0) this.#byStream.delete(streamId);
    this.#sqlOf().exec("DELETE FROM dokit_stream_readers WHERE stream = ? AND connection = ?", streamId, connectionId);
  }

  #closed(connection: Connection): void {
    this.#owed.delete(connection.id);
    for (const [streamId, readers] of this.#byStream) {
      readers.delete(connection.id);
      if (readers.size === 0) this.#byStream.delete(streamId);
    }
    this.#sqlOf().exec("DELETE FROM dokit_stream_readers WHERE connection = ?", connection.id);
  }

  #readersOf(streamId: string): Map<string, Connection | undefined> {
    let readers = this.#byStream.get(streamId);
    if (readers) return readers;
    readers = new Map();
    for (const { connection } of this.#sqlOf().exec<{ connection: string }>("SELECT connection FROM dokit_stream_readers WHERE stream = ?", streamId)) {
      readers.set(connection, undefined);
    }
    this.#byStream.set(streamId, readers);
    return readers;
  }

  #sqlOf(): SqlStorage {
    // SAFETY: set by attach(), which runs before any frame or append reaches the readers.
    const sql = this.#sql as SqlStorage;
    if (!this.#ready) {
      for (const statement of SCHEMA) sql.exec(statement);
      this.#ready = true;
    }
    return sql;
  }
}

function endFrame(streamId: string, state: StreamEndFrame["state"], cursor: number, reason: string | null): StreamEndFrame {
  const frame: StreamEndFrame = { type: STREAM_END, stream: streamId, state, cursor };
  if (reason !== null) frame.error = reason;
  return frame;
}

function refuse(connection: Connection, code: StreamWireErrorCode, error: string, streamId: string): void {
  trySend(connection, JSON.stringify({ type: DOKIT_ERROR, code, error: `dokit: ${error}`, stream: streamId }));
}
