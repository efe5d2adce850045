import { DokitError } from "../lifecycle/errors";
import type { JobErrorCode } from "./errors";
import { utf8Length } from "../utf8/size";

/** Which job tables have a run in progress: a row left here means the instance stopped mid-run. */
const RUNS = "dokit_job_runs";

// One SQLite table of durable jobs, owned by one capability (Scheduler:
// dokit_schedules, Queue: dokit_queue). The next job to run is found through a
// partial index on the pending rows, so it costs one index seek however many
// jobs are stored. Created lazily: an object that never schedules runs no SQL.

/** One stored job. Times are ms since the epoch. */
export type JobRow = {
  /** Insertion order (the rowid): push order for the Queue, a tie-break for equal due times. */
  seq: number;
  id: string;
  callback: string;
  /** The payload as JSON; `null` for no payload. */
  payload: string | null;
  /** When the job runs next (for a failed, kept job: when it last ran). */
  due: number;
  /** Failed attempts since the job last succeeded (a run cut short by an eviction counts). */
  attempts: number;
  /** The owning capability's own fields, as JSON (kind, cron, interval, retry, …). */
  spec: string;
  created: number;
  /** 1 once the job failed its last attempt and was kept (`keepFailed`); such rows never run again. */
  failed: number;
  /** The last failure's message. */
  error: string | null;
  /** Bumped on every replacement, so a run never finishes a job that was replaced while it ran. */
  rev: number;
};

/** What a new or replacing job stores. */
export type NewJob = Pick<JobRow, "id" | "callback" | "payload" | "due" | "spec" | "created">;

/**
 * The most bytes one stored job may take: SQLite on Cloudflare refuses a string, BLOB or
 * row over 2 MB (SQLITE_TOOBIG), read here as 2,000,000 bytes. A job is refused up front
 * when its payload, id, callback and options (as UTF-8) need more than this less
 * {@link ROW_OVERHEAD}; a job is never split across rows.
 */
const MAX_JOB_BYTES = 2_000_000;

/** Room kept in a row for its numbers, its record header and a stored error message. */
const ROW_OVERHEAD = 16_384;

/** The longest error message kept in a job's row (in UTF-16 units); a longer one is cut. */
const MAX_ERROR_CHARS = 4_096;

/** How many due jobs one query takes (they run one at a time; see {@link JobTable.takeDue}). */
export const TAKE_BATCH = 32;

/**
 * The row a run took, and no other: `rev` tells a replacement; `id` tells a new job that reused the
 * `seq` of one deleted meanwhile (a rowid is reused once the highest row is gone, and a capability
 * may delete a job while its run goes on, as Tasks does when a run settles). Params: seq, rev, id.
 */
const SAME_JOB = "seq = ? AND rev = ? AND id = ?";

/** The columns of a JobRow, in the order takeDue reads them. */
const COLUMNS = "seq, id, callback, payload, due, attempts, spec, created, failed, error, rev";

/**
 * The SQL text that finds the next job to run.
 * @param table - the capability's table
 * @param order - `due` (earliest first) or `seq` (insertion order, for a queue)
 */
export function nextJobQuery(table: string, order: "due" | "seq"): string {
  return `SELECT * FROM ${table} WHERE failed = 0 ORDER BY ${order === "due" ? "due, seq" : "seq"} LIMIT 1`;
}

/**
 * The SQL text that reads the next jobs in run order (one index range). A schedule reads
 * only the rows due at `?` (now); a queue reads its head in push order, of which only the
 * due prefix runs (an item waiting to retry holds the items behind it).
 */
export function dueJobsQuery(table: string, order: "due" | "seq"): string {
  const due = order === "due" ? "AND due <= ? ORDER BY due, seq" : "ORDER BY seq";
  return `SELECT ${COLUMNS} FROM ${table} WHERE failed = 0 ${due} LIMIT ${TAKE_BATCH}`;
}

/** A capability's job table (synchronous SQL). */
export class JobTable {
  readonly #ctx: DurableObjectState;
  readonly #name: string;
  readonly #order: "due" | "seq";
  readonly #owner: string;
  readonly #next: string;
  readonly #take: string;
  readonly #byCallback: boolean;
  #sql: SqlStorage | undefined;
  /** Due jobs read ahead by takeDue, next last; valid while no write happened since (#taken === #writes). */
  #ahead: JobRow[] = [];
  /** Counts the writes that can change which job runs next (all but finishing the job that ran). */
  #writes = 0;
  #taken = -1;

  /**
   * @param ctx - the object's state; nothing is read until first use
   * @param name - the table's name
   * @param order - which job runs first: the earliest `due`, or the first inserted (`seq`)
   * @param owner - the capability's name, for errors
   * @param byCallback - index the callback column (for lookups by callback that must not scan)
   */
  constructor(ctx: DurableObjectState, name: string, order: "due" | "seq", owner: string, byCallback = false) {
    this.#ctx = ctx;
    this.#name = name;
    this.#order = order;
    this.#owner = owner;
    this.#next = nextJobQuery(name, order);
    this.#take = dueJobsQuery(name, order);
    this.#byCallback = byCallback;
  }

  /**
   * Stores `job`, replacing a job with the same id (the replacement keeps its place in a queue).
   * @throws DokitError INVALID_PAYLOAD when the job is too large for one row ({@link MAX_JOB_BYTES}); nothing is written then
   */
  upsert(job: NewJob): JobRow {
    checkJobSize(job, this.#owner);
    return this.#change<JobRow>(
      `INSERT INTO ${this.#name} (id, callback, payload, due, spec, created) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET callback = excluded.callback, payload = excluded.payload, due = excluded.due,
         spec = excluded.spec, created = excluded.created, attempts = 0, failed = 0, error = NULL, rev = rev + 1
       RETURNING *`,
      job.id,
      job.callback,
      job.payload,
      job.due,
      job.spec,
      job.created,
    ).one();
  }

  /** @returns the job with `id` */
  get(id: string): JobRow | undefined {
    return this.#table().exec<JobRow>(`SELECT * FROM ${this.#name} WHERE id = ?`, id).toArray()[0];
  }

  /** @returns the next job to run (one index seek), failed-and-kept jobs aside */
  next(): JobRow | undefined {
    return this.#table().exec<JobRow>(this.#next).toArray()[0];
  }

  /**
   * @returns when the next job is due (the lifecycle's alarm asks, once per instance), without
   * creating the table: `undefined` when it does not exist or holds no job to run
   */
  nextDue(): number | undefined {
    if (!this.#sql && !hasTable(this.#ctx, this.#name)) return undefined;
    return this.next()?.due;
  }

  /**
   * @param where - an SQL condition on the table's columns (`1` for every row)
   * @returns matching jobs in run order (failed-and-kept ones last)
   */
  select(where: string, ...params: SqlStorageValue[]): JobRow[] {
    const order = this.#order === "due" ? "failed, due, seq" : "failed, seq";
    return this.#table().exec<JobRow>(`SELECT * FROM ${this.#name} WHERE ${where} ORDER BY ${order}`, ...params).toArray();
  }

  /** @returns rows whose `callback` is `callback` (an index seek when built with `byCallback`), in insertion order */
  byCallback(callback: string): JobRow[] {
    return this.#table().exec<JobRow>(`SELECT * FROM ${this.#name} WHERE callback = ? ORDER BY seq`, callback).toArray();
  }

  /** @returns how many jobs were deleted */
  delete(where: string, ...params: SqlStorageValue[]): number {
    return this.#change(`DELETE FROM ${this.#name} WHERE ${where}`, ...params).rowsWritten;
  }

  /**
   * @returns the next job when it is due at `now`, else `undefined`. One query reads up to
   * {@link TAKE_BATCH} due jobs ahead; any write that could change the order (a job stored,
   * replaced, deleted or moved) drops them, so the next call reads again.
   */
  takeDue(now: number): JobRow | undefined {
    if (this.#taken !== this.#writes || this.#ahead.length === 0) {
      this.#ahead = [];
      this.#taken = this.#writes;
      const sql = this.#table();
      for (const c of (this.#order === "due" ? sql.exec(this.#take, now) : sql.exec(this.#take)).raw()) {
        // SAFETY: the columns are COLUMNS, in that order.
        const row: JobRow = { seq: c[0], id: c[1], callback: c[2], payload: c[3], due: c[4], attempts: c[5], spec: c[6], created: c[7], failed: c[8], error: c[9], rev: c[10] } as JobRow;
        // A queue's due prefix: an item waiting to retry holds the ones behind it.
        if (row.due > now) break;
        this.#ahead.push(row);
      }
      this.#ahead.reverse();
    }
    return this.#ahead.pop();
  }

  /**
   * Counts an attempt for a job whose run was cut short (the instance stopped while it ran).
   * @returns the job with the attempt counted
   */
  countCutShort(row: JobRow): JobRow {
    const sql = `UPDATE ${this.#name} SET attempts = attempts + 1 WHERE ${SAME_JOB} RETURNING *`;
    return this.#change<JobRow>(sql, row.seq, row.rev, row.id).toArray()[0] ?? row;
  }

  /** Notes that a run of this table's jobs started (one write per alarm run, not per job). */
  markRunning(): void {
    // A change for takeDue too: a new run reads afresh.
    this.#change(`INSERT OR REPLACE INTO ${RUNS} (name) VALUES (?)`, this.#name);
  }

  /** Notes that the run ended cleanly. */
  clearRunning(): void {
    this.#table().exec(`DELETE FROM ${RUNS} WHERE name = ?`, this.#name);
  }

  /** @returns whether the last run did not end cleanly (its instance stopped while a job ran) */
  wasRunning(): boolean {
    return this.#table().exec(`SELECT 1 FROM ${RUNS} WHERE name = ?`, this.#name).toArray().length > 0;
  }

  /** Finishes a run: deletes a one-shot job (`next` null), or moves a recurring one to `next`. Skips a replaced or deleted job. */
  finish(row: JobRow, next: number | null): void {
    if (next === null) this.#table().exec(`DELETE FROM ${this.#name} WHERE ${SAME_JOB}`, row.seq, row.rev, row.id);
    else this.#table().exec(`UPDATE ${this.#name} SET due = ?, attempts = 0, error = NULL WHERE ${SAME_JOB}`, next, row.seq, row.rev, row.id);
  }

  /** Counts a failed attempt and moves the job to its retry time. */
  retryAt(row: JobRow, due: number, error: string): void {
    const sql = `UPDATE ${this.#name} SET due = ?, error = ?, attempts = attempts + 1 WHERE ${SAME_JOB}`;
    this.#change(sql, due, clip(error), row.seq, row.rev, row.id);
  }

  /** Keeps a job that failed its last attempt (`attempts` in all); it never runs again. */
  keepFailed(row: JobRow, error: string, attempts: number): void {
    const sql = `UPDATE ${this.#name} SET failed = 1, error = ?, attempts = ? WHERE ${SAME_JOB}`;
    this.#change(sql, clip(error), attempts, row.seq, row.rev, row.id);
  }


  /** Runs a write that can change which job runs next (so it drops takeDue's read-ahead). */
  #change<T extends Record<string, SqlStorageValue>>(query: string, ...params: SqlStorageValue[]): SqlStorageCursor<T> {
    const sql = this.#table();
    this.#writes++;
    return sql.exec<T>(query, ...params);
  }

  #table(): SqlStorage {
    if (this.#sql) return this.#sql;
    const t = this.#name;
    let sql: SqlStorage;
    try {
      sql = this.#ctx.storage.sql;
      sql.exec(
        `CREATE TABLE IF NOT EXISTS ${t} (
          seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, callback TEXT NOT NULL, payload TEXT,
          due INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, spec TEXT NOT NULL, created INTEGER NOT NULL,
          failed INTEGER NOT NULL DEFAULT 0, error TEXT, rev INTEGER NOT NULL DEFAULT 0)`,
      );
      // The next job: one seek in this partial index (the rowid `seq` rides along as the tie-break).
      sql.exec(`CREATE INDEX IF NOT EXISTS ${t}_next ON ${t}(${this.#order === "due" ? "due" : "seq"}) WHERE failed = 0`);
      sql.exec(`CREATE TABLE IF NOT EXISTS ${RUNS} (name TEXT PRIMARY KEY NOT NULL)`);
      if (this.#byCallback) sql.exec(`CREATE INDEX IF NOT EXISTS ${t}_callback ON ${t}(callback)`);
    } catch (error) {
      throw new DokitError<JobErrorCode>(
        "NO_SQLITE",
        `${this.#owner} stores its jobs in SQLite: bind this class in "new_sqlite_classes" (not "new_classes") in its wrangler migration`,
        { cause: error },
      );
    }
    this.#sql = sql;
    return sql;
  }
}

/** @returns an error message short enough to keep in a job's row (a thrown message can be any size) */
function clip(error: string): string {
  return error.length <= MAX_ERROR_CHARS ? error : `${error.slice(0, MAX_ERROR_CHARS)}…`;
}

/**
 * @throws DokitError INVALID_PAYLOAD when `job` needs more than {@link MAX_JOB_BYTES} in one row
 */
function checkJobSize(job: NewJob, owner: string): void {
  const budget = MAX_JOB_BYTES - ROW_OVERHEAD;
  const text = `${job.payload}${job.id}${job.callback}${job.spec}`;
  // Cheap bound first (at most 3 UTF-8 bytes per UTF-16 unit): a job far below the limit is not encoded.
  if (text.length * 3 <= budget) return;
  const bytes = utf8Length(text);
  if (bytes > budget) {
    throw new DokitError<JobErrorCode>(
      "INVALID_PAYLOAD",
      `${owner}: the job takes ${bytes} bytes (payload as JSON, id, callback, options); at most ${budget} fit in one row, as SQLite refuses a row over 2 MB: store large data elsewhere and pass its key`,
    );
  }
}

/** The outcome of adopting the reference implementation's rows (npm agents). */
export interface Adoption {
  adopted: number;
  /** Rows left in the reference tables, with the reason. */
  left: { table: string; id: string; reason: string }[];
}

/** Logs the rows an adoption left in place (never dropped silently). */
export function reportAdoption(owner: string, adoption: Adoption): void {
  if (adoption.left.length === 0) return;
  const rows = adoption.left.map((row) => `${row.table} ${row.id}: ${row.reason}`).join("; ");
  console.warn(`dokit: ${owner} adopted ${adoption.adopted} reference row(s) and left ${adoption.left.length} in place: ${rows}`);
}

/** @returns whether the object's SQLite storage has a table `name` (false for a class without SQLite) */
export function hasTable(ctx: DurableObjectState, name: string): boolean {
  try {
    return ctx.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name).toArray().length > 0;
  } catch {
    return false;
  }
}

/**
 * @returns `payload` as JSON (`null` for `undefined`)
 * @throws DokitError INVALID_PAYLOAD when it cannot be stored as JSON (a function, a symbol, a BigInt, a cycle)
 */
export function serializePayload(payload: unknown, owner: string): string | null {
  if (payload === undefined) return null;
  let json: string | undefined;
  try {
    json = JSON.stringify(payload);
  } catch (error) {
    throw new DokitError<JobErrorCode>("INVALID_PAYLOAD", `${owner}: the payload is not JSON-serializable (${(error as Error).message})`, { cause: error });
  }
  if (json === undefined) throw new DokitError<JobErrorCode>("INVALID_PAYLOAD", `${owner}: the payload is not JSON-serializable (a ${typeof payload})`);
  return json;
}

/** @returns the stored payload (`undefined` for none) */
export function parsePayload(json: string | null): unknown {
  return json === null ? undefined : JSON.parse(json);
}

/**
 * @returns `id` when it is a usable job id
 * @throws DokitError INVALID_ARGUMENT for an empty or over-long id or a non-string
 */
export function checkJobId(id: unknown, owner: string): string {
  if (typeof id !== "string" || id.length === 0 || id.length > 256) {
    throw new DokitError<JobErrorCode>("INVALID_ARGUMENT", `${owner}: an id must be a non-empty string of at most 256 characters`);
  }
  return id;
}

/** The payload type a job callback accepts (its first parameter). */
export type JobPayload<Handler> = Handler extends (payload: infer Payload, ...rest: never[]) => unknown ? Payload : never;
