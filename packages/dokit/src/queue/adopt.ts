import { type Adoption, hasTable, type JobTable } from "../jobs/job-table";

// Adoption of the reference's queued items (npm agents), once, on start: rows
// of `cf_agents_queues` (Agent before the Lifecycle job queue) and the Queue's
// rows of `cf_agents_jobs` (capability "queue"; the item's payload wrapped as
// `{ payload }`), in their order. A row whose callback is registered becomes a
// dokit item with the same id and is deleted from the reference table; any other
// row stays and is reported, never dropped. An emptied reference table is dropped.

const LEGACY = "cf_agents_queues";
const JOBS = "cf_agents_jobs";

/**
 * Moves registered reference items into `table`, after any items it holds.
 * @param registered - whether a callback name is in the Queue's map
 */
export function adoptReferenceItems(ctx: DurableObjectState, table: JobTable, registered: (name: string) => boolean): Adoption {
  const result: Adoption = { adopted: 0, left: [] };
  const sql = ctx.storage.sql;
  const sources: [string, string, (row: Record<string, SqlStorageValue>) => { callback: string; payload: string | null; retry?: unknown } | string][] = [
    [LEGACY, `SELECT * FROM ${LEGACY} ORDER BY created_at, rowid`, (row) => ({ callback: String(row.callback), payload: json(row.payload), retry: parse(row.retry_options) })],
    [
      JOBS,
      `SELECT * FROM ${JOBS} WHERE capability = 'queue' ORDER BY time, created_at, id`,
      (row) => {
        const wrapped = parse(row.payload);
        if (wrapped === INVALID || typeof wrapped !== "object" || wrapped === null) return "its payload is not the reference Queue's JSON";
        const inner = (wrapped as { payload?: unknown }).payload;
        return { callback: String(row.fn), payload: inner === undefined ? null : JSON.stringify(inner), retry: parse(row.retry_options) };
      },
    ],
  ];
  for (const [name, query, read] of sources) {
    if (!hasTable(ctx, name)) continue;
    for (const row of sql.exec(query).toArray()) {
      const id = String(row.id);
      const item = read(row);
      if (typeof item === "string" || item.payload === INVALID_TEXT) {
        result.left.push({ table: name, id, reason: typeof item === "string" ? item : "its payload is not valid JSON" });
        continue;
      }
      if (!registered(item.callback)) {
        result.left.push({ table: name, id, reason: `no callback named "${item.callback}" is registered` });
        continue;
      }
      const spec = typeof item.retry === "object" && item.retry !== null ? { retry: item.retry } : {};
      const now = Date.now();
      table.upsert({ id, callback: item.callback, payload: item.payload, due: now, spec: JSON.stringify(spec), created: now });
      sql.exec(`DELETE FROM ${name} WHERE id = ?`, id);
      result.adopted++;
    }
    if (sql.exec(`SELECT count(*) AS n FROM ${name}`).one().n === 0) sql.exec(`DROP TABLE ${name}`);
  }
  return result;
}

const INVALID = Symbol("invalid JSON");
const INVALID_TEXT = "\u0000invalid";

function parse(value: SqlStorageValue | undefined): unknown {
  if (typeof value !== "string") return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return INVALID;
  }
}

/** @returns a stored JSON text as is when it parses, `null` for none */
function json(value: SqlStorageValue | undefined): string | null {
  if (typeof value !== "string") return null;
  return parse(value) === INVALID ? INVALID_TEXT : value;
}
