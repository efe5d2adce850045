import { splitBytes, joinBytes } from "../rows/bytes";
import { splitRowsAt } from "../rows/text";
import { DokitError } from "../lifecycle/errors";
import type { SessionsErrorCode } from "./errors";
import { type Media, type Prepared, restore, searchText } from "./message";
import type { SearchResult, SessionMessage, SessionRowStat, StoredCompaction } from "./types";

// The rows of every session of an object, in tables it owns, created on first use. Every table is
// WITHOUT ROWID with its key as the primary key and no other index, so inserting a row writes one
// row: a text message that fits a row costs one billed row write. Each method is synchronous and
// each write commits in one SQLite transaction.
//
//   dokit_session_messages   (session_id, id)            seq, parent_id, role, content (the JSON, or its
//                                                        first slice), slices, bytes, tokens, media, created_at
//   dokit_session_slices     (session_id, id, idx)       the further slices of a JSON too long for one row
//   dokit_session_media      (hash, idx)                 a payload's bytes, in parts of at most SLICE_BYTES
//   dokit_session_media_refs (hash, session_id, id)      which messages point at a payload
//   dokit_session_compactions(session_id, id)            overlays: summary, from_id, to_id, created_at
//   dokit_session_fts        FTS5, made by the first search

const MESSAGES = "dokit_session_messages";
const SLICES = "dokit_session_slices";
const MEDIA = "dokit_session_media";
const REFS = "dokit_session_media_refs";
const COMPACTIONS = "dokit_session_compactions";
const FTS = "dokit_session_fts";

/** The most UTF-8 bytes of JSON (or payload bytes) in one row: 1.5 MiB, under the platform's 2 MB row limit with room for the other columns. */
export const SLICE_BYTES = 1536 * 1024;
/** Bound parameters per statement: the platform allows 100. */
const IN_BATCH = 90;

/**
 * A path as reads hold it, root → leaf: the ids, and one number per row (its bytes or its token
 * estimate) at the same index. A long path costs about its ids' strings and four bytes a row.
 */
export interface Path {
  ids: string[];
  sizes: Uint32Array;
}

/** One message of a path without its content. */
export interface PathRow {
  id: string;
  parentId: string | null;
  role: string;
  bytes: number;
  tokens: number;
}

type Row = Record<string, SqlStorageValue>;

/** @returns a `PathRow` from a row of the path's columns (`id`, `parent_id`, `role`, `bytes`, `tokens`) */
function pathRowOf(row: Row): PathRow {
  return {
    id: String(row.id),
    parentId: typeof row.parent_id === "string" ? row.parent_id : null,
    role: String(row.role),
    bytes: Number(row.bytes),
    tokens: Number(row.tokens),
  };
}

/** The SQL engine under every session handle of one Sessions. */
export class SessionStore {
  readonly #ctx: DurableObjectState;
  #sql: SqlStorage | undefined;
  /** The highest seq in the messages table, once read. */
  #seq: number | undefined;
  /** Each session's active leaf (its highest-seq message), once read. */
  readonly #leaves = new Map<string, string | null>();
  /** Whether the search index exists, once asked. */
  #fts: boolean | undefined;

  constructor(ctx: DurableObjectState) {
    this.#ctx = ctx;
  }

  // ------------------------------------------------------------------ plumbing

  #db(): SqlStorage {
    if (this.#sql) return this.#sql;
    let sql: SqlStorage;
    try {
      sql = this.#ctx.storage.sql;
      sql.exec(
        `CREATE TABLE IF NOT EXISTS ${MESSAGES} (session_id TEXT NOT NULL, id TEXT NOT NULL, seq INTEGER NOT NULL, parent_id TEXT, role TEXT NOT NULL,
          content TEXT NOT NULL, slices INTEGER NOT NULL, bytes INTEGER NOT NULL, tokens INTEGER NOT NULL, media TEXT, created_at INTEGER NOT NULL,
          PRIMARY KEY (session_id, id)) WITHOUT ROWID`,
      );
    } catch (error) {
      throw new DokitError<SessionsErrorCode>(
        "NO_SQLITE",
        'Sessions needs SQLite storage: declare the class under "new_sqlite_classes" in the wrangler migrations',
        { cause: error },
      );
    }
    sql.exec(`CREATE TABLE IF NOT EXISTS ${SLICES} (session_id TEXT NOT NULL, id TEXT NOT NULL, idx INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (session_id, id, idx)) WITHOUT ROWID`);
    sql.exec(`CREATE TABLE IF NOT EXISTS ${MEDIA} (hash TEXT NOT NULL, idx INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (hash, idx)) WITHOUT ROWID`);
    sql.exec(`CREATE TABLE IF NOT EXISTS ${REFS} (hash TEXT NOT NULL, session_id TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (hash, session_id, id)) WITHOUT ROWID`);
    sql.exec(
      `CREATE TABLE IF NOT EXISTS ${COMPACTIONS} (session_id TEXT NOT NULL, id TEXT NOT NULL, summary TEXT NOT NULL, from_id TEXT NOT NULL, to_id TEXT NOT NULL,
        created_at INTEGER NOT NULL, PRIMARY KEY (session_id, id)) WITHOUT ROWID`,
    );
    this.#sql = sql;
    return sql;
  }

  #rows(query: string, ...params: SqlStorageValue[]): Row[] {
    return this.#db().exec(query, ...params).toArray();
  }

  #run(query: string, ...params: (SqlStorageValue | Uint8Array)[]): void {
    // The platform binds a Uint8Array (a view, as split payloads are) as a BLOB of the bytes it shows.
    this.#db().exec(query, ...(params as SqlStorageValue[]));
  }

  /** Runs `fn` in one synchronous SQLite transaction (a savepoint inside a caller's). */
  transaction<T>(fn: () => T): T {
    this.#db();
    return this.#ctx.storage.transactionSync(fn);
  }

  /** Drops what memory holds of storage (after a caller's transaction rolled back): the next use reads it again. */
  forget(): void {
    this.#seq = undefined;
    this.#leaves.clear();
    this.#fts = undefined;
  }

  #nextSeq(): number {
    this.#seq ??= Number(this.#rows(`SELECT max(seq) AS seq FROM ${MESSAGES}`)[0]?.seq ?? 0);
    return ++this.#seq;
  }

  // ------------------------------------------------------------------ reads

  /** @returns whether `id` is a message of the session */
  exists(sessionId: string, id: string): boolean {
    return this.#rows(`SELECT 1 FROM ${MESSAGES} WHERE session_id = ? AND id = ?`, sessionId, id).length > 0;
  }

  /** @returns the session's active leaf: its most recently written message */
  latestLeafId(sessionId: string): string | null {
    const known = this.#leaves.get(sessionId);
    if (known !== undefined) return known;
    const row = this.#rows(`SELECT id FROM ${MESSAGES} WHERE session_id = ? ORDER BY seq DESC LIMIT 1`, sessionId)[0];
    const leaf = typeof row?.id === "string" ? row.id : null;
    this.#leaves.set(sessionId, leaf);
    return leaf;
  }

  /**
   * @returns the path from the root to `leafId` (default: the active leaf) as a read holds it: its ids and
   *   one number per row (`column`: its bytes, or its token estimate) in a typed array, nothing else per
   *   row. The recursion carries only the small columns (a JSON carried through it would be copied at every
   *   step), and the rows are taken from the cursor one at a time, never all as objects at once.
   */
  path(sessionId: string, leafId?: string | null, column: "bytes" | "tokens" = "bytes"): Path {
    const leaf = leafId ?? this.latestLeafId(sessionId);
    if (leaf === null) return { ids: [], sizes: new Uint32Array(0) };
    const cursor = this.#db().exec(
      `WITH RECURSIVE path(id, parent_id, size, depth) AS (
         SELECT id, parent_id, ${column}, 0 FROM ${MESSAGES} WHERE session_id = ?1 AND id = ?2
         UNION ALL
         SELECT m.id, m.parent_id, m.${column}, path.depth + 1 FROM path JOIN ${MESSAGES} m ON m.session_id = ?1 AND m.id = path.parent_id
       )
       SELECT id, size FROM path ORDER BY depth DESC`,
      sessionId,
      leaf,
    );
    const ids: string[] = [];
    let sizes = new Uint32Array(64);
    for (const [id, size] of cursor.raw<[SqlStorageValue, SqlStorageValue]>()) {
      if (ids.length === sizes.length) {
        const grown = new Uint32Array(sizes.length * 2);
        grown.set(sizes);
        sizes = grown;
      }
      sizes[ids.length] = Number(size);
      ids.push(String(id));
    }
    return { ids, sizes: sizes.slice(0, ids.length) };
  }

  /** @returns the path from the root to `leafId` (default: the active leaf) as one object per row, without content */
  pathRows(sessionId: string, leafId?: string | null): PathRow[] {
    const leaf = leafId ?? this.latestLeafId(sessionId);
    if (leaf === null) return [];
    const rows = this.#rows(
      `WITH RECURSIVE path(id, parent_id, role, bytes, tokens, depth) AS (
         SELECT id, parent_id, role, bytes, tokens, 0 FROM ${MESSAGES} WHERE session_id = ?1 AND id = ?2
         UNION ALL
         SELECT m.id, m.parent_id, m.role, m.bytes, m.tokens, path.depth + 1 FROM path JOIN ${MESSAGES} m ON m.session_id = ?1 AND m.id = path.parent_id
       )
       SELECT id, parent_id, role, bytes, tokens FROM path ORDER BY depth DESC`,
      sessionId,
      leaf,
    );
    return rows.map(pathRowOf);
  }

  /**
   * @returns at most `limit` messages of the path from `fromId` towards the root, without content, in
   *   that order (leaf first): the recursion stops at the limit, so older rows are not read
   */
  walk(sessionId: string, fromId: string, limit: number): PathRow[] {
    const rows = this.#rows(
      `WITH RECURSIVE path(id, parent_id, role, bytes, tokens) AS (
         SELECT id, parent_id, role, bytes, tokens FROM ${MESSAGES} WHERE session_id = ?1 AND id = ?2
         UNION ALL
         SELECT m.id, m.parent_id, m.role, m.bytes, m.tokens FROM path JOIN ${MESSAGES} m ON m.session_id = ?1 AND m.id = path.parent_id
         LIMIT ?3
       )
       SELECT id, parent_id, role, bytes, tokens FROM path`,
      sessionId,
      fromId,
      limit,
    );
    return rows.map(pathRowOf);
  }

  /** @returns whether the session has any overlay */
  hasCompactions(sessionId: string): boolean {
    return this.#rows(`SELECT 1 FROM ${COMPACTIONS} WHERE session_id = ? LIMIT 1`, sessionId).length > 0;
  }

  /** @returns per-row stats of a path */
  stats(sessionId: string, leafId?: string | null): SessionRowStat[] {
    return this.pathRows(sessionId, leafId).map((row) => ({ id: row.id, role: row.role, bytes: row.bytes, tokenEstimate: row.tokens }));
  }

  /** @returns the messages with these ids (those that exist), in the order asked, with their content read back */
  load(sessionId: string, ids: readonly string[]): SessionMessage[] {
    const byId = new Map<string, SessionMessage>();
    for (let at = 0; at < ids.length; at += IN_BATCH) {
      const batch = ids.slice(at, at + IN_BATCH);
      const rows = this.#rows(
        `SELECT id, content, slices, media FROM ${MESSAGES} WHERE session_id = ? AND id IN (${batch.map(() => "?").join(",")})`,
        sessionId,
        ...batch,
      );
      const payloads = new Map<string, string | undefined>();
      for (const row of rows) {
        const id = String(row.id);
        const json = this.#json(sessionId, id, String(row.content), Number(row.slices));
        const hashes = typeof row.media === "string" ? (JSON.parse(row.media) as string[]) : [];
        byId.set(id, restore(json, (hash) => this.#payload(hash, payloads), hashes));
      }
    }
    const messages: SessionMessage[] = [];
    for (const id of ids) {
      const message = byId.get(id);
      if (message) messages.push(message);
    }
    return messages;
  }

  /** @returns one message, read back, or `null` */
  get(sessionId: string, id: string): SessionMessage | null {
    return this.load(sessionId, [id])[0] ?? null;
  }

  /** @returns a message's row JSON: its first slice and the rest, joined */
  #json(sessionId: string, id: string, first: string, slices: number): string {
    if (slices === 0) return first;
    const rest = this.#rows(`SELECT data FROM ${SLICES} WHERE session_id = ? AND id = ? ORDER BY idx`, sessionId, id);
    return first + rest.map((row) => String(row.data)).join("");
  }

  /** @returns a payload as its `data:` url, read once per call of `load` */
  #payload(hash: string, cache: Map<string, string | undefined>): string | undefined {
    if (cache.has(hash)) return cache.get(hash);
    const parts = this.#rows(`SELECT data FROM ${MEDIA} WHERE hash = ? ORDER BY idx`, hash).map((row) => row.data as ArrayBuffer);
    const url = parts.length > 0 ? new TextDecoder().decode(joinBytes(parts)) : undefined;
    cache.set(hash, url);
    return url;
  }

  /** @returns the session's messages whose parent is `id`, oldest first */
  children(sessionId: string, id: string): SessionMessage[] {
    const rows = this.#rows(`SELECT id FROM ${MESSAGES} WHERE session_id = ? AND parent_id = ? ORDER BY seq`, sessionId, id);
    return this.load(
      sessionId,
      rows.map((row) => String(row.id)),
    );
  }

  /** @returns the stored row JSON and media list of a message, for the no-op check of an update */
  #stored(sessionId: string, id: string): { json: string; media: string | null } | undefined {
    const row = this.#rows(`SELECT content, slices, media FROM ${MESSAGES} WHERE session_id = ? AND id = ?`, sessionId, id)[0];
    if (!row) return undefined;
    return { json: this.#json(sessionId, id, String(row.content), Number(row.slices)), media: typeof row.media === "string" ? row.media : null };
  }

  // ------------------------------------------------------------------ writes

  /**
   * Inserts a new message (the caller checked that its id is free).
   * @param parentId - the parent, already resolved (`null`: a root)
   */
  insert(sessionId: string, prepared: Prepared, parentId: string | null, createdAt: number): void {
    const id = prepared.message.id;
    const { parts } = splitRowsAt(prepared.json, SLICE_BYTES);
    this.transaction(() => {
      this.#run(
        `INSERT INTO ${MESSAGES} (session_id, id, seq, parent_id, role, content, slices, bytes, tokens, media, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        sessionId,
        id,
        this.#nextSeq(),
        parentId,
        prepared.message.role,
        parts[0] ?? "",
        parts.length - 1,
        prepared.bytes,
        prepared.tokens,
        prepared.media.length > 0 ? JSON.stringify(prepared.media.map((media) => media.hash)) : null,
        createdAt,
      );
      this.#writeSlices(sessionId, id, parts);
      for (const media of prepared.media) this.#addMedia(sessionId, id, media);
      if (this.#hasIndex()) this.#index(sessionId, prepared.message);
    });
    this.#leaves.set(sessionId, id);
  }

  /**
   * Rewrites a stored message.
   * @returns `false` when the stored row is already this message (nothing written), `undefined` when the id is not stored
   */
  rewrite(sessionId: string, prepared: Prepared): boolean | undefined {
    const id = prepared.message.id;
    const old = this.#stored(sessionId, id);
    if (!old) return undefined;
    const media = prepared.media.length > 0 ? JSON.stringify(prepared.media.map((entry) => entry.hash)) : null;
    if (old.json === prepared.json && old.media === media) return false;
    const { parts } = splitRowsAt(prepared.json, SLICE_BYTES);
    const before = old.media ? (JSON.parse(old.media) as string[]) : [];
    const after = new Set(prepared.media.map((entry) => entry.hash));
    this.transaction(() => {
      this.#run(
        `UPDATE ${MESSAGES} SET role = ?, content = ?, slices = ?, bytes = ?, tokens = ?, media = ? WHERE session_id = ? AND id = ?`,
        prepared.message.role,
        parts[0] ?? "",
        parts.length - 1,
        prepared.bytes,
        prepared.tokens,
        media,
        sessionId,
        id,
      );
      this.#run(`DELETE FROM ${SLICES} WHERE session_id = ? AND id = ?`, sessionId, id);
      this.#writeSlices(sessionId, id, parts);
      for (const entry of prepared.media) if (!before.includes(entry.hash)) this.#addMedia(sessionId, id, entry);
      for (const hash of before) if (!after.has(hash)) this.#dropRef(hash, sessionId, id);
      if (this.#hasIndex()) {
        this.#run(`DELETE FROM ${FTS} WHERE session_id = ? AND id = ?`, sessionId, id);
        this.#index(sessionId, prepared.message);
      }
    });
    return true;
  }

  #writeSlices(sessionId: string, id: string, parts: string[]): void {
    for (let idx = 1; idx < parts.length; idx++) {
      this.#run(`INSERT INTO ${SLICES} (session_id, id, idx, data) VALUES (?, ?, ?, ?)`, sessionId, id, idx, parts[idx] as string);
    }
  }

  /** Points a message at a payload, storing the payload when no message held it yet. */
  #addMedia(sessionId: string, id: string, media: Media): void {
    if (this.#rows(`SELECT 1 FROM ${MEDIA} WHERE hash = ? AND idx = 0`, media.hash).length === 0) {
      splitBytes(media.bytes, SLICE_BYTES).forEach((part, idx) => {
        this.#run(`INSERT INTO ${MEDIA} (hash, idx, data) VALUES (?, ?, ?)`, media.hash, idx, part);
      });
    }
    this.#run(`INSERT OR IGNORE INTO ${REFS} (hash, session_id, id) VALUES (?, ?, ?)`, media.hash, sessionId, id);
  }

  /** Removes a message's pointer to a payload, and the payload with the last pointer. */
  #dropRef(hash: string, sessionId: string, id: string): void {
    this.#run(`DELETE FROM ${REFS} WHERE hash = ? AND session_id = ? AND id = ?`, hash, sessionId, id);
    if (this.#rows(`SELECT 1 FROM ${REFS} WHERE hash = ? LIMIT 1`, hash).length === 0) this.#run(`DELETE FROM ${MEDIA} WHERE hash = ?`, hash);
  }

  /**
   * Deletes messages, giving each surviving child of a deleted message the nearest surviving ancestor as its parent.
   * @returns the ids that were stored (and are now deleted)
   */
  delete(sessionId: string, ids: readonly string[]): string[] {
    const doomed = new Map<string, { parentId: string | null; media: string[] }>();
    for (let at = 0; at < ids.length; at += IN_BATCH) {
      const batch = ids.slice(at, at + IN_BATCH);
      const rows = this.#rows(
        `SELECT id, parent_id, media FROM ${MESSAGES} WHERE session_id = ? AND id IN (${batch.map(() => "?").join(",")})`,
        sessionId,
        ...batch,
      );
      for (const row of rows) {
        doomed.set(String(row.id), {
          parentId: typeof row.parent_id === "string" ? row.parent_id : null,
          media: typeof row.media === "string" ? (JSON.parse(row.media) as string[]) : [],
        });
      }
    }
    if (doomed.size === 0) return [];
    const survivor = (id: string | null): string | null => {
      let at = id;
      while (at !== null && doomed.has(at)) at = doomed.get(at)?.parentId ?? null;
      return at;
    };
    const deleted = [...doomed.keys()];
    this.transaction(() => {
      for (let at = 0; at < deleted.length; at += IN_BATCH) {
        const batch = deleted.slice(at, at + IN_BATCH);
        const children = this.#rows(
          `SELECT id, parent_id FROM ${MESSAGES} WHERE session_id = ? AND parent_id IN (${batch.map(() => "?").join(",")})`,
          sessionId,
          ...batch,
        );
        for (const child of children) {
          const childId = String(child.id);
          if (doomed.has(childId)) continue;
          this.#run(`UPDATE ${MESSAGES} SET parent_id = ? WHERE session_id = ? AND id = ?`, survivor(String(child.parent_id)), sessionId, childId);
        }
      }
      const fts = this.#hasIndex();
      for (const [id, { media }] of doomed) {
        this.#run(`DELETE FROM ${MESSAGES} WHERE session_id = ? AND id = ?`, sessionId, id);
        this.#run(`DELETE FROM ${SLICES} WHERE session_id = ? AND id = ?`, sessionId, id);
        for (const hash of media) this.#dropRef(hash, sessionId, id);
        if (fts) this.#run(`DELETE FROM ${FTS} WHERE session_id = ? AND id = ?`, sessionId, id);
      }
    });
    this.#leaves.delete(sessionId);
    return deleted;
  }

  /** Deletes every message, payload pointer and overlay of a session. */
  clear(sessionId: string): void {
    const hashes = this.#rows(`SELECT DISTINCT hash FROM ${REFS} WHERE session_id = ?`, sessionId).map((row) => String(row.hash));
    this.transaction(() => {
      this.#run(`DELETE FROM ${MESSAGES} WHERE session_id = ?`, sessionId);
      this.#run(`DELETE FROM ${SLICES} WHERE session_id = ?`, sessionId);
      this.#run(`DELETE FROM ${COMPACTIONS} WHERE session_id = ?`, sessionId);
      this.#run(`DELETE FROM ${REFS} WHERE session_id = ?`, sessionId);
      for (const hash of hashes) {
        if (this.#rows(`SELECT 1 FROM ${REFS} WHERE hash = ? LIMIT 1`, hash).length === 0) this.#run(`DELETE FROM ${MEDIA} WHERE hash = ?`, hash);
      }
      if (this.#hasIndex()) this.#run(`DELETE FROM ${FTS} WHERE session_id = ?`, sessionId);
    });
    this.#leaves.set(sessionId, null);
  }

  // ------------------------------------------------------------------ compactions

  /** Stores an overlay. */
  addCompaction(sessionId: string, summary: string, fromId: string, toId: string, now: number): StoredCompaction {
    const id = crypto.randomUUID();
    this.#run(
      `INSERT INTO ${COMPACTIONS} (session_id, id, summary, from_id, to_id, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
      sessionId,
      id,
      summary,
      fromId,
      toId,
      now,
    );
    return { id, summary, fromMessageId: fromId, toMessageId: toId, createdAt: new Date(now).toISOString() };
  }

  /** @returns the session's overlays, oldest first */
  compactions(sessionId: string): StoredCompaction[] {
    return this.#rows(`SELECT id, summary, from_id, to_id, created_at FROM ${COMPACTIONS} WHERE session_id = ? ORDER BY created_at, id`, sessionId).map((row) => ({
      id: String(row.id),
      summary: String(row.summary),
      fromMessageId: String(row.from_id),
      toMessageId: String(row.to_id),
      createdAt: new Date(Number(row.created_at)).toISOString(),
    }));
  }

  // ------------------------------------------------------------------ search

  #hasIndex(): boolean {
    this.#fts ??= this.#rows(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`, FTS).length > 0;
    return this.#fts;
  }

  #index(sessionId: string, message: SessionMessage): void {
    const text = searchText(message);
    if (text !== "") this.#run(`INSERT INTO ${FTS} (session_id, id, role, content) VALUES (?, ?, ?, ?)`, sessionId, message.id, message.role, text);
  }

  /** Makes the search index and fills it from the stored messages: in SQL for one-row messages, here for split ones. */
  #buildIndex(): void {
    this.transaction(() => {
      this.#run(`CREATE VIRTUAL TABLE IF NOT EXISTS ${FTS} USING fts5(session_id UNINDEXED, id UNINDEXED, role UNINDEXED, content)`);
      this.#run(
        `INSERT INTO ${FTS} (session_id, id, role, content)
         SELECT session_id, id, role, text FROM (
           SELECT m.session_id, m.id, m.role,
             (SELECT group_concat(json_extract(p.value, '$.text'), ' ') FROM json_each(m.content, '$.parts') p
               WHERE json_extract(p.value, '$.type') = 'text' AND json_type(p.value, '$.text') = 'text') AS text
           FROM ${MESSAGES} m WHERE m.slices = 0
         ) WHERE text IS NOT NULL AND text != ''`,
      );
      for (const row of this.#rows(`SELECT session_id, id FROM ${MESSAGES} WHERE slices > 0`)) {
        const message = this.get(String(row.session_id), String(row.id));
        if (message) this.#index(String(row.session_id), message);
      }
    });
    this.#fts = true;
  }

  /** @returns the session's messages whose text parts hold every word of `query`, best first */
  search(sessionId: string, query: string, limit: number): SearchResult[] {
    if (!this.#hasIndex()) this.#buildIndex();
    const terms = query.match(/[^\s"]+/g);
    if (!terms) return [];
    const match = terms.map((term) => `"${term}"`).join(" ");
    const rows = this.#rows(
      `SELECT f.id, f.role, f.content, m.created_at FROM ${FTS} f JOIN ${MESSAGES} m ON m.session_id = f.session_id AND m.id = f.id
       WHERE ${FTS} MATCH ? AND f.session_id = ? ORDER BY rank LIMIT ?`,
      match,
      sessionId,
      limit,
    );
    return rows.map((row) => ({
      id: String(row.id),
      role: String(row.role),
      content: String(row.content),
      createdAt: new Date(Number(row.created_at)).toISOString(),
      sessionId,
    }));
  }
}

