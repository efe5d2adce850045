import type { Capability, Claims } from "../lifecycle/capability";
import { DokitError } from "../lifecycle/errors";
import { adoptOnStart, JobRunner, resolveHungMs } from "../jobs/job-runner";
import { checkJobId, type JobRow, JobTable, parsePayload, serializePayload } from "../jobs/job-table";
import { adoptReferenceItems } from "./adopt";
import { DEFAULT_RETRY, resolveRetry, type RetryOptions } from "../jobs/retry";
import type { QueueCallbacks, QueueCriteria, QueueHandlers, QueueItem, QueueOptions, QueuePayload, QueuePushOptions } from "./types";
import type { QueueErrorCode } from "./errors";

const TABLE = "dokit_queue";
const ALARM_KEY = "queue";
const OWNER = "Queue";

/** What a queue row keeps besides the common job columns (`spec`). */
type Spec = { retry?: RetryOptions };

/**
 * Durable background work: pushed items run one at a time, in push order,
 * after the request that pushed them (on the object's one alarm), at least
 * once. Install with `Lifecycle.install(this).use(queue)`.
 */
export class Queue<Handlers extends QueueHandlers = QueueCallbacks> implements Capability {
  readonly capabilityName = OWNER;
  readonly #callbacks: Record<string, (payload: unknown, item: QueueItem<unknown>) => unknown>;
  readonly #options: QueueOptions<Handlers>;
  readonly #retry: Required<RetryOptions>;
  readonly #hungMs: number;
  #table: JobTable | undefined;
  #runner: JobRunner | undefined;

  /**
   * @param options - the named callbacks, the default retry policy, `onError`, `keepFailed`
   * @throws DokitError INVALID_RETRY for a bad default retry policy, INVALID_ARGUMENT for a bad `hungTimeoutSeconds`
   */
  constructor(options: QueueOptions<Handlers> = {}) {
    this.#options = options;
    this.#retry = resolveRetry(OWNER, options.retry, DEFAULT_RETRY);
    this.#hungMs = resolveHungMs(OWNER, options.hungTimeoutSeconds);
    // SAFETY: a registered callback receives the payload it was pushed with (checked where push is typed).
    this.#callbacks = Object.assign(Object.create(null), options.callbacks) as Record<string, (payload: unknown, item: QueueItem<unknown>) => unknown>;
  }

  attach(claims: Claims): void {
    const table = new JobTable(claims.lifecycle.ctx, TABLE, "seq", OWNER);
    const runner = new JobRunner(
      table,
      {
        run: (row) => this.#run(row),
        next: () => null,
        retry: (row) => {
          const retry = parseSpec(row).retry;
          return retry ? resolveRetry(OWNER, retry, this.#retry) : this.#retry;
        },
        keepFailed: this.#options.keepFailed === true,
        onError: this.#options.onError ? (error, row) => this.#options.onError?.(error, toItem(row)) : undefined,
        events: "queue",
      },
      OWNER,
      this.#hungMs,
    );
    runner.attach(claims, ALARM_KEY);
    // The reference's items (cf_agents_queues, cf_agents_jobs) become ours on start.
    const ctx = claims.lifecycle.ctx;
    adoptOnStart(claims, OWNER, runner, () => adoptReferenceItems(ctx, table, (name) => Object.hasOwn(this.#callbacks, name)));
    this.#table = table;
    this.#runner = runner;
  }

  /**
   * Adds an item; it runs after the current request, once the items pushed before it ran.
   * The row is written before the returned promise settles.
   * @param callback - the name of a registered callback
   * @param payload - what the callback receives (JSON-serializable)
   * @param options - a stable `id` (pushing it again replaces the item in place), `retry`
   * @returns the stored item
   * @throws DokitError UNKNOWN_CALLBACK, INVALID_PAYLOAD (not JSON, or a job over 2 MB), INVALID_RETRY, INVALID_ARGUMENT (the id); nothing is stored then
   */
  async push<Name extends keyof Handlers & string>(
    callback: Name,
    payload?: QueuePayload<Handlers[Name]>,
    options: QueuePushOptions = {},
  ): Promise<QueueItem<QueuePayload<Handlers[Name]>>> {
    if (!Object.hasOwn(this.#callbacks, callback) || typeof this.#callbacks[callback] !== "function") {
      throw new DokitError<QueueErrorCode>("UNKNOWN_CALLBACK", `${OWNER}: no callback named "${String(callback)}" is registered in new Queue({ callbacks })`);
    }
    const json = serializePayload(payload, OWNER);
    const spec: Spec = {};
    if (options.retry !== undefined) {
      resolveRetry(OWNER, options.retry, this.#retry);
      spec.retry = options.retry;
    }
    const id = options.id === undefined ? crypto.randomUUID() : checkJobId(options.id, OWNER);
    const now = Date.now();
    const row = this.#tableOf().upsert({ id, callback, payload: json, due: now, spec: JSON.stringify(spec), created: now });
    await this.#runner?.rearm(row.rev > 0 ? undefined : now);
    this.#runner?.publish("create", id, callback);
    // SAFETY: the row was stored from `payload`.
    return toItem(row) as QueueItem<QueuePayload<Handlers[Name]>>;
  }

  /** @returns the item with `id`, pending or failed-and-kept */
  async get<T = unknown>(id: string): Promise<QueueItem<T> | undefined> {
    const row = this.#tableOf().get(id);
    // SAFETY: the caller names the payload type it pushed.
    return row && (toItem(row) as QueueItem<T>);
  }

  /**
   * @param criteria - only the items of one callback
   * @returns pending items in push order (failed-and-kept ones last)
   */
  async list<T = unknown>(criteria: QueueCriteria = {}): Promise<QueueItem<T>[]> {
    const table = this.#tableOf();
    const rows = criteria.callback === undefined ? table.select("1") : table.select("callback = ?", criteria.callback);
    // SAFETY: the caller names the payload type it pushed.
    return rows.map(toItem) as QueueItem<T>[];
  }

  /**
   * Removes an item that has not run yet (one that is running finishes).
   * @returns whether an item was removed
   */
  async remove(id: string): Promise<boolean> {
    const removed = this.#tableOf().delete("id = ?", id) > 0;
    if (removed) await this.#runner?.rearm();
    return removed;
  }

  /**
   * Removes every item, or every item of one callback.
   * @returns how many items were removed
   */
  async clear(callback?: string): Promise<number> {
    const table = this.#tableOf();
    const removed = callback === undefined ? table.delete("1") : table.delete("callback = ?", callback);
    if (removed > 0) await this.#runner?.rearm();
    return removed;
  }

  /** The reference's name for {@link remove}. */
  cancel(id: string): Promise<boolean> {
    return this.remove(id);
  }

  /** The reference's name for {@link clear}. */
  cancelAll(callback?: string): Promise<number> {
    return this.clear(callback);
  }

  async #run(row: JobRow): Promise<void> {
    const callback = this.#callbacks[row.callback];
    if (!callback) throw new DokitError<QueueErrorCode>("UNKNOWN_CALLBACK", `${OWNER}: no callback named "${row.callback}" is registered (item ${row.id})`);
    await callback(parsePayload(row.payload), toItem(row));
  }

  #tableOf(): JobTable {
    if (!this.#table) throw new DokitError<QueueErrorCode>("NOT_INSTALLED", `${OWNER} is not installed: add it with Lifecycle.install(this).use(queue)`);
    return this.#table;
  }
}

function parseSpec(row: JobRow): Spec {
  // SAFETY: written by push from a Spec.
  return JSON.parse(row.spec) as Spec;
}

/** @returns the reference-shaped view of a row */
function toItem(row: JobRow): QueueItem<unknown> {
  const spec = parseSpec(row);
  return {
    id: row.id,
    callback: row.callback,
    payload: parsePayload(row.payload),
    createdAt: Math.floor(row.created / 1000),
    ...(spec.retry ? { retry: spec.retry } : {}),
    ...(row.failed ? { failed: { error: row.error ?? "", attempts: row.attempts } } : {}),
  };
}
