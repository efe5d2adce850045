import { BATCH_BYTES, estimateBytes } from "./sizes";
import type { LogRange, OutgoingMessage, RoomMessage } from "./types";

/** How much of the room's past the sequencer keeps for shards and clients that catch up. */
export interface LogWindow {
  /** The newest messages kept. */
  messages: number;
  /** How long a message is kept, in ms. */
  ms: number;
}

type Row = { seq: number; publisher: string; data: string; filter: string | null };

/**
 * The sequencer's replay log in its SQLite storage: one row per message, in seq order, bounded by a
 * window (a count and an age), and deduplicated by (publisher, message id, content digest) while a
 * message is in it.
 * The last seq ever given (`head`) is kept apart, so an emptied log still numbers on from it.
 */
export class RoomLog {
  readonly #sql: SqlStorage;
  readonly #window: LogWindow;
  #head: number;

  constructor(sql: SqlStorage, window: LogWindow) {
    this.#sql = sql;
    this.#window = window;
    sql.exec(`CREATE TABLE IF NOT EXISTS dokit_room_log (
      seq INTEGER PRIMARY KEY, publisher TEXT NOT NULL, msg_id TEXT NOT NULL, data TEXT NOT NULL, filter TEXT, at INTEGER NOT NULL)`);
    // Deduplication is by (publisher, message id, content digest): a message with a known id but other
    // content is another message (ids are guessable, so an id alone must never swallow a publish).
    const table = sql.exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'dokit_room_log'").one().sql;
    if (!table.includes("digest")) sql.exec("ALTER TABLE dokit_room_log ADD COLUMN digest TEXT NOT NULL DEFAULT ''");
    sql.exec("DROP INDEX IF EXISTS dokit_room_log_dedup");
    sql.exec("CREATE UNIQUE INDEX IF NOT EXISTS dokit_room_log_dedup_content ON dokit_room_log (publisher, msg_id, digest)");
    sql.exec("CREATE TABLE IF NOT EXISTS dokit_room_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    this.#head = Number(this.meta("head") ?? 0);
  }

  /** The last seq given (0 before the first message). */
  get head(): number {
    return this.#head;
  }

  /** @returns a value kept beside the log (the room's key, its head) */
  meta(key: string): string | undefined {
    return this.#sql.exec<{ value: string }>("SELECT value FROM dokit_room_meta WHERE key = ?", key).toArray()[0]?.value;
  }

  setMeta(key: string, value: string): void {
    this.#sql.exec("INSERT INTO dokit_room_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", key, value);
  }

  /**
   * Gives each new message the next seq and appends it; a message already in the log (the same
   * publisher, id and content digest) keeps its seq. Call inside a transaction.
   * @param digests - each message's {@link contentDigest}, in order
   * @returns the seq of each message, in order
   */
  append(messages: readonly OutgoingMessage[], digests: readonly string[], now: number): number[] {
    const seqs: number[] = [];
    for (const [i, message] of messages.entries()) {
      const publisher = message.from ?? "";
      const digest = digests[i] as string;
      const taken = this.#sql.exec<{ seq: number }>("SELECT seq FROM dokit_room_log WHERE publisher = ? AND msg_id = ? AND digest = ?", publisher, message.id, digest).toArray()[0];
      if (taken) {
        seqs.push(taken.seq);
        continue;
      }
      const seq = ++this.#head;
      const filter = message.except?.length || message.tag !== undefined ? JSON.stringify({ except: message.except, tag: message.tag }) : null;
      this.#sql.exec("INSERT INTO dokit_room_log (seq, publisher, msg_id, digest, data, filter, at) VALUES (?, ?, ?, ?, ?, ?, ?)", seq, publisher, message.id, digest, message.data, filter, now);
      seqs.push(seq);
    }
    this.setMeta("head", String(this.#head));
    this.#trim(now);
    return seqs;
  }

  /**
   * @returns the messages after `after`, in order (those the window dropped are skipped): up to
   * `limit` of them and {@link BATCH_BYTES} by {@link estimateBytes}, always at least one when there is one
   */
  after(after: number, limit: number): RoomMessage[] {
    const messages: RoomMessage[] = [];
    let bytes = 0;
    // Read row by row: the byte bound stops the read, so no more than a batch is ever held.
    for (const row of this.#sql.exec<Row>("SELECT seq, publisher, data, filter FROM dokit_room_log WHERE seq > ? ORDER BY seq LIMIT ?", after, limit)) {
      bytes += estimateBytes(row.data, row.publisher, row.filter);
      if (messages.length > 0 && bytes > BATCH_BYTES) break;
      messages.push(toMessage(row));
    }
    return messages;
  }

  /** @returns what follows `after`: the gap the window made, if any, then up to `limit` messages (and {@link BATCH_BYTES}) */
  range(after: number, limit: number): LogRange {
    // A seq beyond the head (a client of a room whose storage was deleted) counts as the head.
    const from = Math.min(Math.max(0, after), this.#head);
    const oldest = this.#sql.exec<{ seq: number | null }>("SELECT min(seq) AS seq FROM dokit_room_log").one().seq ?? this.#head + 1;
    const gap = from + 1 < oldest && from < this.#head ? { from: from + 1, to: Math.min(oldest - 1, this.#head) } : undefined;
    const messages = this.after(gap ? gap.to : from, limit);
    const last = messages.at(-1)?.seq ?? (gap ? gap.to : from);
    return { ...(gap && { gap }), messages, last, more: last < this.#head };
  }

  /** Drops what the window no longer holds: all but the newest `messages`, and those older than `ms`. */
  #trim(now: number): void {
    this.#sql.exec("DELETE FROM dokit_room_log WHERE seq <= ?", this.#head - this.#window.messages);
    // Seqs grow with time: the first row young enough bounds the rows that are not (a scan in seq order that stops there).
    const cutoff = now - this.#window.ms;
    const young = this.#sql.exec<{ seq: number }>("SELECT seq FROM dokit_room_log WHERE at >= ? ORDER BY seq LIMIT 1", cutoff).toArray()[0];
    this.#sql.exec("DELETE FROM dokit_room_log WHERE seq < ?", young ? young.seq : this.#head + 1);
  }
}

function toMessage(row: Row): RoomMessage {
  const message: RoomMessage = { seq: row.seq, data: row.data };
  if (row.publisher !== "") message.from = row.publisher;
  if (row.filter !== null) {
    // SAFETY: written by append() from an OutgoingMessage's except and tag.
    const { except, tag } = JSON.parse(row.filter) as { except?: string[]; tag?: string };
    if (except) message.except = except;
    if (tag !== undefined) message.tag = tag;
  }
  return message;
}

/**
 * @returns the SHA-256 (hex) of what a message says: its body and its filters. A retry of a publish
 * has the same; a different message under the same id does not, so it is never taken for a retry.
 */
export async function contentDigest(message: OutgoingMessage): Promise<string> {
  const content = JSON.stringify([message.data, message.except ?? null, message.tag ?? null]);
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(content));
  return Array.from(new Uint8Array(hash), (byte) => byte.toString(16).padStart(2, "0")).join("");
}
