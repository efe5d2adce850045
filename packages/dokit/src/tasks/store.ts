import { DokitError } from "../lifecycle/errors";
import type { TasksErrorCode } from "./errors";

// The runs, their step journals and their undelivered events, in three SQLite
// tables created on first use (an object that never runs a task runs no SQL;
// the events table waits for the first event).
// Every write an attempt makes is conditioned on the attempt's claim, so an
// attempt that lost its run (cancelled, taken over) cannot change it.

const RUNS = "dokit_task_runs";
const STEPS = "dokit_task_steps";
const EVENTS = "dokit_task_events";

/** One stored run. Times are ms since the epoch. */
export type RunRow = {
  seq: number;
  id: string;
  definition: string;
  idem: string | null;
  input: string | null;
  metadata: string | null;
  retain: number;
  state: string;
  /** The wait reason of a waiting run; the cancel reason of a cancelled one. */
  reason: string | null;
  wake_at: number | null;
  /** Execution attempts so far. */
  attempt: number;
  /** The live attempt's token; set while `running`. */
  claim: string | null;
  started_at: number | null;
  status: string | null;
  result: string | null;
  /** A failed run's error, as JSON `{ name, message }`. */
  error: string | null;
  created: number;
  settled: number | null;
};

/** One journal entry of a run. */
export type StepRow = {
  run: string;
  name: string;
  ord: number;
  kind: "do" | "sleep" | "event";
  /** `running` (an attempt is executing it), `retry` (waiting to retry), `waiting` (a sleep or an event), `done`, `failed`. */
  state: "running" | "retry" | "waiting" | "done" | "failed";
  attempts: number;
  result: string | null;
  wake_at: number | null;
  /** An event step's type, a failed step's error as JSON `{ name, message, code? }`. */
  detail: string | null;
  updated: number;
};

export const TERMINAL = ["completed", "failed", "cancelled"] as const;

/** @returns whether `state` is settled */
export const isTerminal = (state: string): boolean => (TERMINAL as readonly string[]).includes(state);

/** The run, step and event tables of one object (synchronous SQL). */
export class TaskStore {
  readonly #ctx: DurableObjectState;
  #sql: SqlStorage | undefined;
  /** Whether the events table exists (created by the first event sent). */
  #events: boolean | undefined;

  constructor(ctx: DurableObjectState) {
    this.#ctx = ctx;
  }

  /** @returns whether the tables exist (without creating them) */
  exists(): boolean {
    if (this.#sql) return true;
    try {
      return this.#ctx.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", RUNS).toArray().length > 0;
    } catch {
      return false;
    }
  }

  get sql(): SqlStorage {
    if (this.#sql) return this.#sql;
    let sql: SqlStorage;
    try {
      sql = this.#ctx.storage.sql;
      // One index beside the ids: the idempotency key (partial: most runs have none). The running
      // runs a woken object takes over are found through their wakes (runningIds), not an index
      // every state change would write.
      sql.exec(`CREATE TABLE IF NOT EXISTS ${RUNS} (
        seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, definition TEXT NOT NULL, idem TEXT, input TEXT, metadata TEXT,
        retain INTEGER NOT NULL DEFAULT 1, state TEXT NOT NULL, reason TEXT, wake_at INTEGER, attempt INTEGER NOT NULL DEFAULT 0,
        claim TEXT, started_at INTEGER, status TEXT, result TEXT, error TEXT, created INTEGER NOT NULL, settled INTEGER)`);
      sql.exec(`CREATE UNIQUE INDEX IF NOT EXISTS ${RUNS}_idem ON ${RUNS}(idem) WHERE idem IS NOT NULL`);
      sql.exec(`CREATE TABLE IF NOT EXISTS ${STEPS} (
        run TEXT NOT NULL, name TEXT NOT NULL, ord INTEGER NOT NULL, kind TEXT NOT NULL, state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0, result TEXT, wake_at INTEGER, detail TEXT, updated INTEGER NOT NULL,
        PRIMARY KEY (run, name)) WITHOUT ROWID`);
    } catch (error) {
      throw new DokitError<TasksErrorCode>(
        "NO_SQLITE",
        `Tasks stores its runs in SQLite: bind this class in "new_sqlite_classes" (not "new_classes") in its wrangler migration`,
        { cause: error },
      );
    }
    this.#sql = sql;
    return sql;
  }

  // ------------------------------------------------------------------ runs

  run(id: string): RunRow | undefined {
    return this.sql.exec<RunRow>(`SELECT * FROM ${RUNS} WHERE id = ?`, id).toArray()[0];
  }

  runByKey(idem: string): RunRow | undefined {
    return this.sql.exec<RunRow>(`SELECT * FROM ${RUNS} WHERE idem = ?`, idem).toArray()[0];
  }

  insertRun(row: Pick<RunRow, "id" | "definition" | "idem" | "input" | "metadata" | "retain" | "created">): RunRow {
    return this.sql
      .exec<RunRow>(
        `INSERT INTO ${RUNS} (id, definition, idem, input, metadata, retain, state, created) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?) RETURNING *`,
        row.id,
        row.definition,
        row.idem,
        row.input,
        row.metadata,
        row.retain,
        row.created,
      )
      .one();
  }

  /** @returns runs matching `where`, newest first */
  listRuns(where: string, params: SqlStorageValue[], limit: number): RunRow[] {
    return this.sql.exec<RunRow>(`SELECT * FROM ${RUNS} WHERE ${where} ORDER BY seq DESC LIMIT ?`, ...params, limit).toArray();
  }

  /**
   * @param jobs - the table of the runs' wakes (every unsettled run has one)
   * @returns the runs an attempt held when this isolate started (their attempts were lost), read
   *   through the wakes: as many rows as unsettled runs, however many settled ones are kept
   */
  runningRuns(jobs: string): { id: string; definition: string }[] {
    return this.sql
      .exec<{ id: string; definition: string }>(`SELECT r.id, r.definition FROM ${jobs} j JOIN ${RUNS} r ON r.id = j.id WHERE r.state = 'running'`)
      .toArray();
  }

  /** @returns the token of the run's live attempt (`null` when none holds it) */
  claimOf(id: string): string | null | undefined {
    return this.sql.exec<{ claim: string | null }>(`SELECT claim FROM ${RUNS} WHERE id = ?`, id).toArray()[0]?.claim;
  }

  /** Takes the run for a new attempt. */
  claim(id: string, claim: string, attempt: number, now: number): void {
    this.sql.exec(`UPDATE ${RUNS} SET state = 'running', claim = ?, attempt = ?, started_at = ?, reason = NULL, wake_at = NULL WHERE id = ?`, claim, attempt, now, id);
  }

  /** @returns whether the attempt still held the run and parked it */
  park(id: string, claim: string, reason: string, wakeAt: number | null): boolean {
    return this.sql.exec(`UPDATE ${RUNS} SET state = 'waiting', claim = NULL, reason = ?, wake_at = ? WHERE id = ? AND claim = ?`, reason, wakeAt, id, claim).rowsWritten > 0;
  }

  /** @returns whether the attempt still held the run and set its message */
  setStatus(id: string, claim: string, message: string): boolean {
    return this.sql.exec(`UPDATE ${RUNS} SET status = ? WHERE id = ? AND claim = ?`, message, id, claim).rowsWritten > 0;
  }

  /**
   * Settles a run: by its attempt (`claim`), or from outside (`claim` null: a cancel, a missing definition).
   * @returns the settled row, or `undefined` when the attempt no longer held it or it had settled
   */
  settle(id: string, claim: string | null, state: string, fields: { result?: string | null; error?: string; reason?: string | null }, now: number): RunRow | undefined {
    const held = claim === null ? "state NOT IN ('completed', 'failed', 'cancelled')" : "claim = ?";
    const params: SqlStorageValue[] = [state, fields.result ?? null, fields.error ?? null, fields.reason ?? null, now, id];
    if (claim !== null) params.push(claim);
    return this.sql
      .exec<RunRow>(
        `UPDATE ${RUNS} SET state = ?, result = ?, error = ?, reason = ?, settled = ?, claim = NULL, wake_at = NULL WHERE id = ? AND ${held} RETURNING *`,
        ...params,
      )
      .toArray()[0];
  }

  /** Deletes runs (with their journals and events). @returns how many */
  deleteRuns(ids: string[]): number {
    let deleted = 0;
    for (const id of ids) {
      deleted += this.sql.exec(`DELETE FROM ${RUNS} WHERE id = ?`, id).rowsWritten;
      this.sql.exec(`DELETE FROM ${STEPS} WHERE run = ?`, id);
      if (this.#hasEvents()) this.sql.exec(`DELETE FROM ${EVENTS} WHERE run = ?`, id);
    }
    return deleted;
  }

  // ------------------------------------------------------------------ steps

  steps(run: string): StepRow[] {
    return this.sql.exec<StepRow>(`SELECT * FROM ${STEPS} WHERE run = ? ORDER BY ord`, run).toArray();
  }

  step(run: string, name: string): StepRow | undefined {
    return this.sql.exec<StepRow>(`SELECT * FROM ${STEPS} WHERE run = ? AND name = ?`, run, name).toArray()[0];
  }

  /** @returns how many journal entries the run has */
  stepCount(run: string): number {
    return this.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${STEPS} WHERE run = ?`, run).one().n;
  }

  /** @returns the step an attempt was executing when its isolate was lost */
  runningStep(run: string): StepRow | undefined {
    return this.sql.exec<StepRow>(`SELECT * FROM ${STEPS} WHERE run = ? AND state = 'running'`, run).toArray()[0];
  }

  /** @returns the type of the event the run waits for, if it waits for one */
  waitingEventType(run: string): string | undefined {
    return this.sql.exec<{ detail: string }>(`SELECT detail FROM ${STEPS} WHERE run = ? AND kind = 'event' AND state = 'waiting'`, run).toArray()[0]?.detail;
  }

  /**
   * Writes a journal entry, if the attempt still holds the run.
   * @returns whether it was written
   */
  writeStep(claim: string, step: Omit<StepRow, "ord"> & { ord?: number }): boolean {
    return (
      this.sql.exec(
        `INSERT INTO ${STEPS} (run, name, ord, kind, state, attempts, result, wake_at, detail, updated)
         SELECT ?, ?, coalesce(?, (SELECT count(*) FROM ${STEPS} WHERE run = ?)), ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM ${RUNS} WHERE id = ? AND claim = ?)
         ON CONFLICT (run, name) DO UPDATE SET state = excluded.state, attempts = excluded.attempts, result = excluded.result,
           wake_at = excluded.wake_at, detail = excluded.detail, updated = excluded.updated`,
        step.run,
        step.name,
        step.ord ?? null,
        step.run,
        step.kind,
        step.state,
        step.attempts,
        step.result,
        step.wake_at,
        step.detail,
        step.updated,
        step.run,
        claim,
      ).rowsWritten > 0
    );
  }

  // ------------------------------------------------------------------ events

  /** @returns whether the events table exists; `create` makes it */
  #hasEvents(create = false): boolean {
    if (this.#events) return true;
    const sql = this.sql;
    this.#events = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", EVENTS).toArray().length > 0;
    if (this.#events || !create) return this.#events;
    sql.exec(`CREATE TABLE IF NOT EXISTS ${EVENTS} (seq INTEGER PRIMARY KEY, run TEXT NOT NULL, type TEXT NOT NULL, payload TEXT, created INTEGER NOT NULL)`);
    sql.exec(`CREATE INDEX IF NOT EXISTS ${EVENTS}_run ON ${EVENTS}(run, type, seq)`);
    this.#events = true;
    return true;
  }

  /** @returns how many events wait for the run */
  eventCount(run: string): number {
    if (!this.#hasEvents()) return 0;
    return this.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${EVENTS} WHERE run = ?`, run).one().n;
  }

  addEvent(run: string, type: string, payload: string | null, now: number): void {
    this.#hasEvents(true);
    this.sql.exec(`INSERT INTO ${EVENTS} (run, type, payload, created) VALUES (?, ?, ?, ?)`, run, type, payload, now);
  }

  /** @returns the oldest undelivered event of `type` for the run */
  peekEvent(run: string, type: string): { seq: number; payload: string | null } | undefined {
    if (!this.#hasEvents()) return undefined;
    return this.sql.exec<{ seq: number; payload: string | null }>(`SELECT seq, payload FROM ${EVENTS} WHERE run = ? AND type = ? ORDER BY seq LIMIT 1`, run, type).toArray()[0];
  }

  deleteEvent(seq: number): void {
    this.sql.exec(`DELETE FROM ${EVENTS} WHERE seq = ?`, seq);
  }
}
