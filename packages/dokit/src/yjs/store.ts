import { joinBytes, splitBytes } from "../rows/bytes";

// The document in SQLite. Two tables:
//   _dokit_yjs_snapshot (part, data): the compacted document, one Yjs update split across rows
//   _dokit_yjs_updates (seq, part, data): every update since, in arrival order, each split across rows
// A row holds at most 1 MiB (rows/bytes.ts), so neither the document nor one update is bound by
// SQLite's 2 MB row limit. Compaction replaces the snapshot and deletes the updates it covers in
// one synchronous transaction: a crash leaves the old snapshot and its tail, or the new one.

export const SNAPSHOT_TABLE = "_dokit_yjs_snapshot";
export const UPDATES_TABLE = "_dokit_yjs_updates";
/** An update's part, one per row: the same text each time, so the runtime reuses its prepared statement. */
const INSERT_PART = `INSERT INTO ${UPDATES_TABLE} (seq, part, data) VALUES (?, ?, ?)`;

/** What the store holds, in bytes and updates. */
export interface StoreSize {
  /** The snapshot's size in bytes (0 before the first compaction). */
  snapshotBytes: number;
  /** Updates stored since the snapshot. */
  updates: number;
  /** Their size in bytes. */
  updateBytes: number;
}

/** The document's rows: the snapshot and the tail of updates after it. */
export class DocumentStore {
  readonly #storage: DurableObjectStorage;
  #created = false;
  #lastSeq = 0;
  readonly size: StoreSize = { snapshotBytes: 0, updates: 0, updateBytes: 0 };

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  get #sql(): SqlStorage {
    const sql = this.#storage.sql;
    if (!this.#created) {
      sql.exec(`CREATE TABLE IF NOT EXISTS ${SNAPSHOT_TABLE} (part INTEGER PRIMARY KEY, data BLOB NOT NULL)`);
      sql.exec(`CREATE TABLE IF NOT EXISTS ${UPDATES_TABLE} (seq INTEGER NOT NULL, part INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (seq, part))`);
      this.#created = true;
    }
    return sql;
  }

  /**
   * Reads everything stored, and counts it.
   * @returns the snapshot (if any) and the updates after it, in order
   */
  load(): { snapshot: Uint8Array | undefined; updates: Uint8Array[] } {
    const sql = this.#sql;
    const snapshotBytes = sql.exec<{ bytes: number | null }>(`SELECT sum(length(data)) AS bytes FROM ${SNAPSHOT_TABLE}`).one().bytes ?? 0;
    let snapshot: Uint8Array | undefined;
    if (snapshotBytes > 0) {
      // Copied part by part into one array: the parts need not all be held at once.
      snapshot = new Uint8Array(snapshotBytes);
      let at = 0;
      for (const row of sql.exec<{ data: ArrayBuffer }>(`SELECT data FROM ${SNAPSHOT_TABLE} ORDER BY part`)) {
        snapshot.set(new Uint8Array(row.data), at);
        at += row.data.byteLength;
      }
    }
    const updates: Uint8Array[] = [];
    let parts: ArrayBuffer[] = [];
    let seq = 0;
    let updateBytes = 0;
    for (const row of sql.exec<{ seq: number; data: ArrayBuffer }>(`SELECT seq, data FROM ${UPDATES_TABLE} ORDER BY seq, part`)) {
      if (row.seq !== seq && parts.length) {
        updates.push(joinBytes(parts));
        parts = [];
      }
      seq = row.seq;
      parts.push(row.data);
      updateBytes += row.data.byteLength;
    }
    if (parts.length) updates.push(joinBytes(parts));
    this.#lastSeq = seq;
    Object.assign(this.size, { snapshotBytes, updates: updates.length, updateBytes });
    return { snapshot, updates };
  }

  /** @returns what is stored, counted in SQL without reading the rows (for a document not in memory) */
  measure(): StoreSize {
    const sql = this.#sql;
    const snapshot = sql.exec<{ bytes: number | null }>(`SELECT sum(length(data)) AS bytes FROM ${SNAPSHOT_TABLE}`).one();
    const tail = sql.exec<{ updates: number; bytes: number | null }>(`SELECT count(DISTINCT seq) AS updates, sum(length(data)) AS bytes FROM ${UPDATES_TABLE}`).one();
    return { snapshotBytes: snapshot.bytes ?? 0, updates: tail.updates, updateBytes: tail.bytes ?? 0 };
  }

  /** Appends an update (split across rows when large). @returns its sequence number */
  append(update: Uint8Array): number {
    const sql = this.#sql;
    const seq = ++this.#lastSeq;
    const parts = splitBytes(update);
    for (let part = 0; part < parts.length; part++) sql.exec(INSERT_PART, seq, part, parts[part]);
    this.size.updates++;
    this.size.updateBytes += update.byteLength;
    return seq;
  }

  /** Deletes an update just appended (it could not be applied). */
  remove(seq: number, bytes: number): void {
    this.#sql.exec(`DELETE FROM ${UPDATES_TABLE} WHERE seq = ?`, seq);
    this.size.updates--;
    this.size.updateBytes -= bytes;
  }

  /**
   * Replaces the snapshot by `state` (the whole document as one update) and deletes every
   * update it covers, in one transaction.
   */
  compact(state: Uint8Array): void {
    const sql = this.#sql;
    const upTo = this.#lastSeq;
    this.#storage.transactionSync(() => {
      sql.exec(`DELETE FROM ${SNAPSHOT_TABLE}`);
      const parts = splitBytes(state);
      for (let part = 0; part < parts.length; part++) sql.exec(`INSERT INTO ${SNAPSHOT_TABLE} (part, data) VALUES (?, ?)`, part, parts[part]);
      sql.exec(`DELETE FROM ${UPDATES_TABLE} WHERE seq <= ?`, upTo);
    });
    Object.assign(this.size, { snapshotBytes: state.byteLength, updates: 0, updateBytes: 0 });
  }

  /** Deletes the whole document. */
  clear(): void {
    const sql = this.#sql;
    this.#storage.transactionSync(() => {
      sql.exec(`DELETE FROM ${SNAPSHOT_TABLE}`);
      sql.exec(`DELETE FROM ${UPDATES_TABLE}`);
    });
    Object.assign(this.size, { snapshotBytes: 0, updates: 0, updateBytes: 0 });
  }
}
