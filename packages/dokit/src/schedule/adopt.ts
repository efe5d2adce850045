import { type Adoption, hasTable, type JobTable } from "../jobs/job-table";
import type { RetryOptions } from "../jobs/retry";
import { nextCronRun } from "./cron";
import type { ScheduleSpec } from "./types";

// Adoption of the reference's schedules (npm agents), once, on start: rows of
// `cf_agents_schedules` (Agent before the Lifecycle job queue; times in seconds)
// and the Scheduler's rows of `cf_agents_jobs` (capability "scheduler"; times in
// ms, the schedule's fields in the JSON payload). A row whose callback is
// registered becomes a dokit schedule with the same id and is deleted from the
// reference table; any other row stays where it is and is reported, never
// dropped. An emptied reference table is dropped.


type Reference = { callback: string; payload: unknown; due: number; spec: ScheduleSpec };

const LEGACY = "cf_agents_schedules";
const JOBS = "cf_agents_jobs";

/**
 * Moves registered reference schedules into `table`.
 * @param registered - whether a callback name is in the Scheduler's map
 */
export function adoptReferenceSchedules(ctx: DurableObjectState, table: JobTable, registered: (name: string) => boolean): Adoption {
  const result: Adoption = { adopted: 0, left: [] };
  const sql = ctx.storage.sql;
  if (hasTable(ctx, LEGACY)) {
    for (const row of sql.exec(`SELECT * FROM ${LEGACY}`).toArray()) {
      const id = String(row.id);
      const outcome = fromLegacy(row);
      if (adoptOne(table, id, outcome, registered, result, LEGACY)) sql.exec(`DELETE FROM ${LEGACY} WHERE id = ?`, id);
    }
    if (sql.exec(`SELECT count(*) AS n FROM ${LEGACY}`).one().n === 0) sql.exec(`DROP TABLE ${LEGACY}`);
  }
  if (hasTable(ctx, JOBS)) {
    for (const row of sql.exec(`SELECT * FROM ${JOBS} WHERE capability = 'scheduler'`).toArray()) {
      const id = String(row.id);
      const outcome = fromJob(row);
      if (adoptOne(table, id, outcome, registered, result, JOBS)) sql.exec(`DELETE FROM ${JOBS} WHERE id = ?`, id);
    }
    if (sql.exec(`SELECT count(*) AS n FROM ${JOBS}`).one().n === 0) sql.exec(`DROP TABLE ${JOBS}`);
  }
  return result;
}

function adoptOne(
  table: JobTable,
  id: string,
  outcome: Reference | string,
  registered: (name: string) => boolean,
  result: Adoption,
  from: string,
): boolean {
  if (typeof outcome === "string") {
    result.left.push({ table: from, id, reason: outcome });
    return false;
  }
  if (!registered(outcome.callback)) {
    result.left.push({ table: from, id, reason: `no callback named "${outcome.callback}" is registered` });
    return false;
  }
  const payload = outcome.payload === undefined ? null : JSON.stringify(outcome.payload);
  table.upsert({ id, callback: outcome.callback, payload, due: outcome.due, spec: JSON.stringify(outcome.spec), created: Date.now() });
  result.adopted++;
  return true;
}

/** A `cf_agents_schedules` row: id, callback, payload (JSON), type, time (s), delayInSeconds, cron, intervalSeconds, retry_options. */
function fromLegacy(row: Record<string, SqlStorageValue>): Reference | string {
  const payload = parseJson(row.payload);
  if (payload === INVALID) return "its payload is not valid JSON";
  const retry = parseJson(row.retry_options);
  return toReference(String(row.callback), payload, Number(row.time) * 1000, {
    type: row.type,
    delayInSeconds: row.delayInSeconds,
    cron: row.cron,
    intervalSeconds: row.intervalSeconds,
    retry: retry === INVALID ? undefined : retry,
  });
}

/** A `cf_agents_jobs` row of the reference Scheduler: fn, time (ms), payload `{ payload, retry, type, delayInSeconds, cron, intervalSeconds }`. */
function fromJob(row: Record<string, SqlStorageValue>): Reference | string {
  const wrapped = parseJson(row.payload);
  if (wrapped === INVALID || typeof wrapped !== "object" || wrapped === null) return "its payload is not the reference Scheduler's JSON";
  const fields = wrapped as Record<string, unknown>;
  return toReference(String(row.fn), fields.payload, Number(row.time), fields);
}

function toReference(callback: string, payload: unknown, due: number, fields: Record<string, unknown>): Reference | string {
  if (!Number.isFinite(due)) return "its time is not a number";
  const retry = typeof fields.retry === "object" && fields.retry !== null ? (fields.retry as RetryOptions) : undefined;
  const base = retry ? { retry } : {};
  switch (fields.type) {
    case "scheduled":
      return { callback, payload, due, spec: { type: "scheduled", ...base } };
    case "delayed":
      return { callback, payload, due, spec: { type: "delayed", delayInSeconds: Number(fields.delayInSeconds ?? 0), ...base } };
    case "cron": {
      const cron = String(fields.cron ?? "");
      try {
        nextCronRun(cron, Date.now());
      } catch {
        return `its cron expression "${cron}" is not 5 valid fields`;
      }
      return { callback, payload, due, spec: { type: "cron", cron, ...base } };
    }
    case "interval": {
      const intervalSeconds = Number(fields.intervalSeconds);
      if (!(intervalSeconds > 0)) return "its interval is not a positive number";
      return { callback, payload, due, spec: { type: "interval", intervalSeconds, anchor: due, ...base } };
    }
    default:
      return `its type ${JSON.stringify(fields.type)} is unknown`;
  }
}

const INVALID = Symbol("invalid JSON");

function parseJson(value: SqlStorageValue | undefined): unknown {
  if (typeof value !== "string") return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return INVALID;
  }
}
