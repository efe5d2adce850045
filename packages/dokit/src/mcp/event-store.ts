import type { EventStore, JSONRPCMessage } from "@modelcontextprotocol/server";
import { joinBytes, ROW_BYTES, splitBytes } from "../rows/bytes";
import { EVENT_PARTS_TABLE, EVENTS_TABLE, type Tables } from "./tables";

// Resumability for 2025-era sessions: the SDK transport's EventStore, kept in
// the object's SQLite storage so `Last-Event-ID` works across an eviction.
//
// An event id is `<streamId>:<n>`: it names its stream, so a resume replays
// only that stream, and only for the session that owns the store (an id from
// another session, or a made-up one, is refused by the SDK as invalid).
// `n` is the row id: increasing, so "after" is a plain comparison.
//
// SQLite in a Durable Object refuses a string, BLOB or row over 2 MB
// (SQLITE_TOOBIG), and a tool result may be larger. An event whose JSON is
// over ROW_BYTES is kept as UTF-8 pieces of ROW_BYTES (rows/bytes.ts) in EVENT_PARTS_TABLE
// (its event row holds `''`, which no JSON message is), written in one
// synchronous transaction with its event row and read back whole, so the
// client on a live stream and the client that resumes both get all of it.

/** @returns the stream an event id names, and its sequence number */
function parseEventId(eventId: string): { stream: string; seq: number } | undefined {
  const cut = eventId.lastIndexOf(":");
  if (cut <= 0) return undefined;
  const seq = Number(eventId.slice(cut + 1));
  if (!Number.isSafeInteger(seq) || seq < 0) return undefined;
  return { stream: eventId.slice(0, cut), seq };
}

/** @returns the stream id encoded in an event id, or `undefined` */
export function streamOfEventId(eventId: string): string | undefined {
  return parseEventId(eventId)?.stream;
}

/** One session's event log in SQLite: the SDK's `EventStore`, bounded per stream. */
export class SqlEventStore implements EventStore {
  readonly #tables: Tables;
  readonly #session: string;
  readonly #maxPerStream: number;
  /** While true, nothing is stored (used while a session is being restored). */
  muted = false;

  /**
   * @param tables - the capability's tables
   * @param session - the session the log belongs to
   * @param maxPerStream - events kept per stream; older ones are dropped
   */
  constructor(tables: Tables, session: string, maxPerStream: number) {
    this.#tables = tables;
    this.#session = session;
    this.#maxPerStream = maxPerStream;
  }

  /** Stores one outgoing message. @returns its event id */
  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    if (this.muted) return `${streamId}:0`;
    const json = JSON.stringify(message);
    // A UTF-16 code unit is at most 3 UTF-8 bytes: short JSON fits one row without encoding it.
    const bytes = json.length * 3 <= ROW_BYTES ? undefined : new TextEncoder().encode(json);
    const sql = this.#tables.created();
    const id = this.#tables.storage.transactionSync(() => {
      const inline = bytes === undefined || bytes.byteLength <= ROW_BYTES;
      const row = sql
        .exec<{ id: number }>(
          `INSERT INTO ${EVENTS_TABLE} (session, stream, message) VALUES (?, ?, ?) RETURNING id`,
          this.#session,
          streamId,
          inline ? json : "",
        )
        .one();
      if (!inline) {
        const parts = splitBytes(bytes);
        for (let n = 0; n < parts.length; n++) {
          sql.exec(`INSERT INTO ${EVENT_PARTS_TABLE} (event, n, session, stream, part) VALUES (?, ?, ?, ?, ?)`, row.id, n, this.#session, streamId, parts[n]);
        }
      }
      this.#trim(sql, streamId);
      return row.id;
    });
    return `${streamId}:${id}`;
  }

  /** Keeps the newest `maxPerStream` events of a stream (and the pieces of those it drops go too). */
  #trim(sql: SqlStorage, streamId: string): void {
    const older = `SELECT id FROM ${EVENTS_TABLE} WHERE session = ? AND stream = ? ORDER BY id DESC LIMIT -1 OFFSET ?`;
    sql.exec(
      `DELETE FROM ${EVENT_PARTS_TABLE} WHERE session = ? AND stream = ? AND event IN (${older})`,
      this.#session,
      streamId,
      this.#session,
      streamId,
      this.#maxPerStream,
    );
    sql.exec(`DELETE FROM ${EVENTS_TABLE} WHERE id IN (${older})`, this.#session, streamId, this.#maxPerStream);
  }

  /** @returns the JSON of a stored event, joined from its pieces when it has them; `undefined` once trimmed */
  #read(sql: SqlStorage, row: { id: number; message: string }): string | undefined {
    if (row.message !== "") return row.message;
    const parts = sql
      .exec<{ part: ArrayBuffer }>(`SELECT part FROM ${EVENT_PARTS_TABLE} WHERE event = ? ORDER BY n`, row.id)
      .toArray()
      .map((piece) => piece.part);
    if (parts.length === 0) return undefined;
    return new TextDecoder().decode(joinBytes(parts));
  }

  /** @returns the stream of an event this session stored, or `undefined` for an unknown id */
  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    const parsed = parseEventId(eventId);
    if (!parsed) return undefined;
    const sql = this.#tables.created();
    // Row ids are shared by all sessions: an id whose row belongs to another session is refused.
    const owner = sql
      .exec<{ session: string; stream: string }>(`SELECT session, stream FROM ${EVENTS_TABLE} WHERE id = ?`, parsed.seq)
      .toArray()[0];
    if (owner) return owner.session === this.#session && owner.stream === parsed.stream ? parsed.stream : undefined;
    // The event was trimmed (bounded log): resume from what is left of that stream, if anything.
    const left = sql
      .exec<{ n: number }>(
        `SELECT COUNT(*) AS n FROM ${EVENTS_TABLE} WHERE session = ? AND stream = ? AND id > ?`,
        this.#session,
        parsed.stream,
        parsed.seq,
      )
      .one();
    return left.n > 0 ? parsed.stream : undefined;
  }

  /** Sends every event of the same stream stored after `lastEventId`. @returns the stream id */
  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const parsed = parseEventId(lastEventId);
    if (!parsed) return "";
    const sql = this.#tables.created();
    const rows = sql
      .exec<{ id: number; message: string }>(
        `SELECT id, message FROM ${EVENTS_TABLE} WHERE session = ? AND stream = ? AND id > ? ORDER BY id`,
        this.#session,
        parsed.stream,
        parsed.seq,
      )
      .toArray();
    for (const row of rows) {
      const json = this.#read(sql, row);
      // An event trimmed while earlier ones were being sent is gone: nothing to send.
      if (json === undefined) continue;
      // SAFETY: the store only ever writes JSON of a JSON-RPC message (or the SDK's `{}` priming event).
      const message = JSON.parse(json) as JSONRPCMessage;
      // Priming events (`{}`) are resume anchors, not messages: never sent again.
      if (!("jsonrpc" in message)) continue;
      await send(`${parsed.stream}:${row.id}`, message);
    }
    return parsed.stream;
  }

  /** Deletes one stream's events (its response stream completed). */
  clearStream(streamId: string): void {
    const sql = this.#tables.created();
    sql.exec(`DELETE FROM ${EVENT_PARTS_TABLE} WHERE session = ? AND stream = ?`, this.#session, streamId);
    sql.exec(`DELETE FROM ${EVENTS_TABLE} WHERE session = ? AND stream = ?`, this.#session, streamId);
  }

  /** Deletes every event of the session. */
  clear(): void {
    const sql = this.#tables.created();
    sql.exec(`DELETE FROM ${EVENT_PARTS_TABLE} WHERE session = ?`, this.#session);
    sql.exec(`DELETE FROM ${EVENTS_TABLE} WHERE session = ?`, this.#session);
  }
}
