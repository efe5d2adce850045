// The SQL of Streams. A stream is one row of dokit_streams; its chunks live in
// rollover blocks of dokit_stream_blocks: one row holds consecutive chunks (their
// JSON texts joined by commas) until it reaches BLOCK_BYTES, then the next append
// starts a new row. An append is one row written either way (the UPDATE that
// grows the block, or the INSERT of the next), and a stream of thousands of
// chunks is a handful of rows to replay and to delete.
//
// While a stream is live its row is not touched per append: the cursor is the
// tail block's `first + count`, kept in memory once read. Settlement stamps the
// row's cursor and times, so a settled row reads straight through.
import type { StreamJson, StreamState, StreamStatus } from "./types";

/** A block is closed to further appends once it holds this many bytes of chunk text. */
export const BLOCK_BYTES = 256 * 1024;

/** One row of dokit_streams. */
export type StreamRow = {
  id: string;
  state: StreamState;
  tag: string | null;
  metadata: string | null;
  error: string | null;
  cursor: number;
  generation: number;
  created: number;
  updated: number;
  closed: number | null;
};

/** The tail block of a stream, as far as appends need it. */
export type Tail = { first: number; count: number; bytes: number; updated: number };

/** What a live stream's appends need in memory. */
export type Live = { row: StreamRow; tail: Tail | null };

/** A parsed block: the chunks from cursor `first` on. */
export type Block = { first: number; chunks: StreamJson[] };

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS dokit_streams (
    id TEXT PRIMARY KEY, state TEXT NOT NULL, tag TEXT, metadata TEXT, error TEXT,
    cursor INTEGER NOT NULL DEFAULT 0, generation INTEGER NOT NULL DEFAULT 1,
    created INTEGER NOT NULL, updated INTEGER NOT NULL, closed INTEGER)`,
  "CREATE INDEX IF NOT EXISTS dokit_streams_tag ON dokit_streams (tag) WHERE tag IS NOT NULL",
  "CREATE INDEX IF NOT EXISTS dokit_streams_closed ON dokit_streams (closed) WHERE closed IS NOT NULL",
  `CREATE TABLE IF NOT EXISTS dokit_stream_blocks (
    stream TEXT NOT NULL, first INTEGER NOT NULL, count INTEGER NOT NULL, bytes INTEGER NOT NULL,
    updated INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (stream, first)) WITHOUT ROWID`,
];

/** The SQL of one object's streams. Every method is synchronous. */
export class StreamStore {
  readonly #sql: SqlStorage;
  #ready = false;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** Creates the tables once per instance (idempotent DDL). */
  ensure(): void {
    if (this.#ready) return;
    for (const statement of SCHEMA) this.#sql.exec(statement);
    this.#ready = true;
  }

  row(id: string): StreamRow | undefined {
    this.ensure();
    return this.#sql.exec<StreamRow>("SELECT * FROM dokit_streams WHERE id = ?", id).toArray()[0];
  }

  tail(id: string): Tail | null {
    return (
      this.#sql
        .exec<Tail>("SELECT first, count, bytes, updated FROM dokit_stream_blocks WHERE stream = ? ORDER BY first DESC LIMIT 1", id)
        .toArray()[0] ?? null
    );
  }

  insert(id: string, tag: string | null, metadata: string | null, now: number): StreamRow {
    this.ensure();
    this.#sql.exec("INSERT INTO dokit_streams (id, state, tag, metadata, created, updated) VALUES (?, 'streaming', ?, ?, ?, ?)", id, tag, metadata, now, now);
    return { id, state: "streaming", tag, metadata, error: null, cursor: 0, generation: 1, created: now, updated: now, closed: null };
  }

  /** Takes a live stream for a new writer. @returns the new generation */
  bumpGeneration(id: string): number {
    return this.#sql.exec<{ generation: number }>("UPDATE dokit_streams SET generation = generation + 1 WHERE id = ? RETURNING generation", id).one().generation;
  }

  /** Appends one chunk's JSON text at cursor `seq`, growing the tail block or starting the next. @returns the new tail */
  append(id: string, tail: Tail | null, seq: number, json: string, bytes: number, now: number): Tail {
    if (tail && tail.count > 0 && tail.bytes + bytes <= BLOCK_BYTES) {
      this.#sql.exec(
        "UPDATE dokit_stream_blocks SET count = count + 1, bytes = bytes + ?, updated = ?, body = body || ',' || ? WHERE stream = ? AND first = ?",
        bytes,
        now,
        json,
        id,
        tail.first,
      );
      return { first: tail.first, count: tail.count + 1, bytes: tail.bytes + bytes, updated: now };
    }
    this.#sql.exec("INSERT INTO dokit_stream_blocks (stream, first, count, bytes, updated, body) VALUES (?, ?, 1, ?, ?, ?)", id, seq, bytes, now, json);
    return { first: seq, count: 1, bytes, updated: now };
  }

  settle(id: string, state: "completed" | "errored", error: string | null, cursor: number, now: number): void {
    this.#sql.exec("UPDATE dokit_streams SET state = ?, error = ?, cursor = ?, updated = ?, closed = ? WHERE id = ?", state, error, cursor, now, now, id);
  }

  /** Deletes a stream's row and its blocks. @returns whether a row was deleted */
  delete(id: string): boolean {
    this.ensure();
    this.#sql.exec("DELETE FROM dokit_stream_blocks WHERE stream = ?", id);
    return this.#sql.exec("DELETE FROM dokit_streams WHERE id = ?", id).rowsWritten > 0;
  }

  /**
   * @returns the block holding cursor `seq`, parsed, or `undefined` when no chunk at `seq` is stored
   */
  blockAt(id: string, seq: number): Block | undefined {
    const row = this.#sql
      .exec<{ first: number; count: number; body: string }>(
        "SELECT first, count, body FROM dokit_stream_blocks WHERE stream = ? AND first <= ? ORDER BY first DESC LIMIT 1",
        id,
        seq,
      )
      .toArray()[0];
    if (!row || seq >= row.first + row.count) return undefined;
    // SAFETY: the body is the comma-joined JSON texts of the block's chunks, written by append.
    return { first: row.first, chunks: JSON.parse(`[${row.body}]`) as StreamJson[] };
  }

  /** Every stream row matching the filters, newest first. */
  list(states: StreamState[] | undefined, tag: string | undefined, limit: number | undefined): StreamRow[] {
    this.ensure();
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (states) {
      where.push(`state IN (${states.map(() => "?").join(", ")})`);
      args.push(...states);
    }
    if (tag !== undefined) {
      where.push("tag = ?");
      args.push(tag);
    }
    const clause = where.length ? `WHERE ${where.join(" AND ")}` : "";
    const bound = limit === undefined ? "" : " LIMIT ?";
    if (limit !== undefined) args.push(limit);
    return this.#sql.exec<StreamRow>(`SELECT * FROM dokit_streams ${clause} ORDER BY created DESC, rowid DESC${bound}`, ...args).toArray();
  }

  /** @returns the settled streams to delete under a retention policy (oldest settled first) */
  expired(closedBefore: number | undefined, keep: number | undefined): string[] {
    this.ensure();
    const ids = new Set<string>();
    if (closedBefore !== undefined) {
      for (const { id } of this.#sql.exec<{ id: string }>("SELECT id FROM dokit_streams WHERE closed IS NOT NULL AND closed <= ? ORDER BY closed LIMIT 500", closedBefore)) ids.add(id);
    }
    if (keep !== undefined) {
      for (const { id } of this.#sql.exec<{ id: string }>(
        "SELECT id FROM dokit_streams WHERE closed IS NOT NULL ORDER BY closed DESC, rowid DESC LIMIT 500 OFFSET ?",
        keep,
      ))
        ids.add(id);
    }
    return [...ids];
  }

  /** @returns when the oldest settled stream settled, and how many are settled */
  settledSummary(): { oldest: number | null; count: number } {
    this.ensure();
    return this.#sql.exec<{ oldest: number | null; count: number }>("SELECT MIN(closed) AS oldest, COUNT(*) AS count FROM dokit_streams WHERE closed IS NOT NULL").one();
  }
}

/** @returns the reference-shaped status of a row (`live`: the tail of a live stream) */
export function statusOf(row: StreamRow, tail: Tail | null): StreamStatus {
  const live = row.state === "streaming";
  const status: StreamStatus = {
    streamId: row.id,
    state: row.state,
    cursor: live ? (tail ? tail.first + tail.count : 0) : row.cursor,
    createdAt: row.created,
    updatedAt: live && tail ? Math.max(row.updated, tail.updated) : row.updated,
  };
  if (row.tag !== null) status.tag = row.tag;
  // SAFETY: written by open() from a JSON object.
  if (row.metadata !== null) status.metadata = JSON.parse(row.metadata) as Record<string, StreamJson>;
  if (row.error !== null) status.error = row.error;
  if (row.closed !== null) status.closedAt = row.closed;
  return status;
}
