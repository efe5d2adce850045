import type { Capability, Claims } from "../lifecycle/capability";
import { runInContext } from "../lifecycle/context";
import { errorMessage } from "../lifecycle/errors";
import { JobRunner, resolveHungMs } from "../jobs/job-runner";
import { JobTable } from "../jobs/job-table";
import { Attempt, type AttemptHost, errorJson, type Outcome } from "./attempt";
import { durationMs } from "./duration";
import { MissingTaskDefinitionError, TasksFailure } from "./errors";
import { DEFAULT_POLICY, resolvePolicy, type StepPolicy } from "./policy";
import { isTerminal, type RunRow, TaskStore, TERMINAL } from "./store";
import type {
  Task,
  TaskCallbacks,
  TaskDeleteOptions,
  TaskEventType,
  TaskHandlers,
  TaskInput,
  TaskListOptions,
  TaskOutput,
  TaskReceipt,
  TaskRunOptions,
  TaskRunSnapshot,
  TaskRunState,
  TaskStep,
  TaskValue,
  TaskWaitOptions,
  TasksOptions,
} from "./types";
import { parse, serialize } from "./values";

const JOBS = "dokit_task_jobs";
const ALARM_KEY = "tasks";
const OWNER = "Tasks";
/** The longest run id, idempotency key, definition name and event type, in characters. */
const MAX_ID = 256;
/** Undelivered events one run may hold. */
export const MAX_PENDING_EVENTS = 100;
/** The most runs one `list()` returns. */
const MAX_LIST = 1000;
/** How long an alarm invocation waits for the attempts it started before it returns (they go on). */
const HOLD_MS = 1000;
/** How long the alarm waits for an attempt before it starts the next due run beside it. */
const GRACE_MS = 20;
/** A task job's own retries: none are needed (its work never throws into the job engine), and a cut-short drain is not counted. */
const JOB_RETRY = { maxAttempts: Number.MAX_SAFE_INTEGER, baseDelayMs: 0, maxDelayMs: 0 };

type Handler = (input: unknown, step: TaskStep) => unknown;
type Snapshot = TaskRunSnapshot<TaskValue>;

/**
 * Durable, replayable multi-step work inside the object. Each named definition replays from
 * its first line on every execution attempt; completed steps return their journaled results,
 * sleeps keep their first deadline, and a run continues from its first unfinished step after
 * an eviction, a crash or a deployment. Each run's next deadline is one job on dokit's job
 * engine, so Tasks shares the object's one alarm with the Scheduler and the Queue.
 * Install with `Lifecycle.install(this).use(tasks)`.
 */
export class Tasks<Handlers extends TaskHandlers = TaskCallbacks> implements Capability {
  readonly capabilityName = OWNER;
  readonly #definitions: Record<string, Handler>;
  readonly #options: TasksOptions<Handlers>;
  readonly #policy: StepPolicy;
  readonly #hungMs: number;
  #claims: Claims | undefined;
  #store: TaskStore | undefined;
  #jobs: JobTable | undefined;
  #runner: JobRunner | undefined;
  /** The attempts executing in this isolate, by run id. */
  readonly #live = new Map<string, Attempt>();
  /** Their promises, awaited by the alarm invocation that started them. */
  readonly #driving = new Set<Promise<void>>();
  /** Callers of `wait()`, by run id. */
  readonly #waiters = new Map<string, Set<(snapshot: Snapshot) => void>>();
  /** Wakes the alarm invocation's wait when a job became due meanwhile. */
  #kick: (() => void) | undefined;

  /**
   * @param options - the definitions, the default step retry policy and timeout, `onError`
   * @throws TasksFailure INVALID_ARGUMENT for a bad default policy or `hungTimeoutSeconds`
   */
  constructor(options: TasksOptions<Handlers> = {}) {
    this.#options = options;
    this.#policy = resolvePolicy({ ...(options.retries ? { retries: options.retries } : {}), ...(options.stepTimeout !== undefined ? { timeout: options.stepTimeout } : {}) }, DEFAULT_POLICY);
    this.#hungMs = resolveHungMs(OWNER, options.hungTimeoutSeconds);
    // SAFETY: a definition receives the input it was run with (checked where run() is typed).
    this.#definitions = Object.assign(Object.create(null), options.definitions) as Record<string, Handler>;
  }

  /**
   * Registers one more definition. Call it unconditionally from the constructor (a field
   * initializer): a woken object must find every name its runs were stored with.
   * @throws TasksFailure INVALID_ARGUMENT for a bad name or one already registered
   */
  register(name: string, definition: TaskCallbacks[string]): void {
    checkId(name, "a definition name");
    if (typeof definition !== "function") throw new TasksFailure("INVALID_ARGUMENT", `Tasks: the definition "${name}" must be a function`);
    if (Object.hasOwn(this.#definitions, name)) throw new TasksFailure("INVALID_ARGUMENT", `Tasks: a definition named "${name}" is already registered`);
    this.#definitions[name] = definition as Handler;
  }

  attach(claims: Claims): void {
    const ctx = claims.lifecycle.ctx;
    const jobs = new JobTable(ctx, JOBS, "due", OWNER);
    const runner = new JobRunner(
      jobs,
      {
        // Starts the run's attempt and waits for it a moment: a short run settles or parks here (and its
        // wake needs no lease); a longer one goes on beside the next runs, awaited by afterDrain.
        run: (row) => this.#wake(row.id),
        // A live attempt keeps a lease: if this isolate dies, the job fires then and the run is taken over.
        next: (row) => (this.#live.has(row.id) ? Date.now() + this.#hungMs : null),
        retry: () => JOB_RETRY,
        keepFailed: false,
        events: "",
        // A run's claim says whether its attempt was cut short; the engine's own mark is not needed.
        countsCutShort: false,
      },
      OWNER,
      this.#hungMs,
    );
    runner.attach(claims, ALARM_KEY, () => this.#afterDrain());
    claims.onStart(() => this.#recover());
    this.#claims = claims;
    this.#store = new TaskStore(ctx);
    this.#jobs = jobs;
    this.#runner = runner;
  }

  // ------------------------------------------------------------------ starting runs

  /**
   * Durably accepts a run and returns without waiting for it. The same `idempotencyKey` or
   * `runId` joins the existing run (`accepted: false`).
   * @param definition - a registered definition name
   * @param input - what the handler receives (JSON, at most 1 MiB)
   * @param options - `idempotencyKey`, `runId`, `metadata`, `retain`
   * @returns the receipt
   * @throws MissingTaskDefinitionError for a name not registered; TaskSerializationError; TasksFailure INVALID_ARGUMENT
   */
  async run<Name extends keyof Handlers & string>(definition: Name, input?: TaskInput<Handlers[Name]>, options: TaskRunOptions = {}): Promise<TaskReceipt> {
    return this.#accept(definition, input, options);
  }

  /** @returns a typed lens on one definition's runs (it holds no state) */
  handle<Name extends keyof Handlers & string>(definition: Name): Task<TaskInput<Handlers[Name]>, TaskOutput<Handlers[Name]>> {
    const own = (snapshot: Snapshot | null) => (snapshot?.definition === definition ? snapshot : null) as TaskRunSnapshot<TaskOutput<Handlers[Name]>> | null;
    return {
      name: definition,
      run: (input, options) => this.#accept(definition, input, options ?? {}),
      get: async (runId) => own(await this.get(runId)),
      getByIdempotencyKey: async (key) => own(await this.getByIdempotencyKey(key)),
      cancel: async (runId, reason) => (own(await this.get(runId)) ? this.cancel(runId, reason) : false),
    };
  }

  async #accept(definition: string, input: unknown, options: TaskRunOptions): Promise<TaskReceipt> {
    const store = this.#storeOf();
    if (typeof definition !== "string" || typeof this.#definitions[definition] !== "function") throw new MissingTaskDefinitionError(String(definition));
    const { idempotencyKey, runId, metadata, retain } = options ?? {};
    if (idempotencyKey !== undefined) checkId(idempotencyKey, "an idempotencyKey");
    if (runId !== undefined) checkId(runId, "a runId");
    if (metadata !== undefined && (metadata === null || typeof metadata !== "object" || Array.isArray(metadata))) {
      throw new TasksFailure("INVALID_ARGUMENT", "Tasks: metadata must be an object of JSON values");
    }
    if (retain !== undefined && typeof retain !== "boolean") throw new TasksFailure("INVALID_ARGUMENT", "Tasks: retain must be a boolean");
    const existing = (idempotencyKey !== undefined ? store.runByKey(idempotencyKey) : undefined) ?? (runId !== undefined ? store.run(runId) : undefined);
    if (existing) return receipt(existing, false);
    const inputJson = serialize(input, "the input");
    const metadataJson = metadata === undefined ? null : serialize(metadata, "the metadata");
    const now = Date.now();
    const id = runId ?? crypto.randomUUID();
    // One synchronous turn: the run and its first wake (now) are stored together; the alarm starts it.
    const row = store.insertRun({ id, definition, idem: idempotencyKey ?? null, input: inputJson, metadata: metadataJson, retain: retain === false ? 0 : 1, created: now });
    this.#due(id, definition, now);
    await this.#runner?.rearm(now);
    this.#publish("task:accepted", { runId: id, definition });
    return receipt(row, true);
  }

  // ------------------------------------------------------------------ reading and control

  /** @returns one run, or `null` */
  async get(runId: string): Promise<Snapshot | null> {
    const row = typeof runId === "string" ? this.#storeOf().run(runId) : undefined;
    return row ? snapshot(row) : null;
  }

  /** @returns the run started with `idempotencyKey`, or `null` */
  async getByIdempotencyKey(idempotencyKey: string): Promise<Snapshot | null> {
    const row = typeof idempotencyKey === "string" ? this.#storeOf().runByKey(idempotencyKey) : undefined;
    return row ? snapshot(row) : null;
  }

  /**
   * @param options - a `definition`, a state (`status` or `state`, one or several), a `limit` (default 100, at most 1,000)
   * @returns matching runs, newest first
   */
  async list(options: TaskListOptions = {}): Promise<Snapshot[]> {
    const where: string[] = ["1"];
    const params: SqlStorageValue[] = [];
    if (options.definition !== undefined) {
      where.push("definition = ?");
      params.push(options.definition);
    }
    const states = options.status ?? options.state;
    if (states !== undefined) {
      const list = Array.isArray(states) ? states : [states];
      where.push(`state IN (${list.map(() => "?").join(", ") || "NULL"})`);
      params.push(...list);
    }
    const limit = Math.min(MAX_LIST, Math.max(0, Math.floor(options.limit ?? 100)));
    return this.#storeOf().listRuns(where.join(" AND "), params, limit).map(snapshot);
  }

  /**
   * Cancels a run. It reads `cancelled` at once; a live attempt's signal is aborted and nothing
   * it does afterwards is written. An effect already made outside cannot be undone.
   * @returns true when a run that had not settled was cancelled
   */
  async cancel(runId: string, reason?: string): Promise<boolean> {
    const row = typeof runId === "string" ? this.#storeOf().run(runId) : undefined;
    if (!row || isTerminal(row.state)) return false;
    const text = reason === undefined ? null : String(reason).slice(0, 4096);
    const settled = await this.#settle(row, null, "cancelled", { reason: text });
    this.#live.get(runId)?.cancel(new TasksFailure("CANCELLED", `Tasks: run ${runId} was cancelled${text ? `: ${text}` : ""}`));
    return settled;
  }

  /**
   * Deletes settled runs with their journals.
   * @param options - which settled `status`es (default all), `settledBefore`, `limit`
   * @returns how many runs were deleted
   */
  async delete(options: TaskDeleteOptions = {}): Promise<number> {
    const states = options.status ?? [...TERMINAL];
    for (const state of states) if (!isTerminal(state)) throw new TasksFailure("INVALID_ARGUMENT", `Tasks: delete() removes settled runs only, not "${state}" ones`);
    const where = [`state IN (${states.map(() => "?").join(", ") || "NULL"})`];
    const params: SqlStorageValue[] = [...states];
    if (options.settledBefore !== undefined) {
      where.push("settled < ?");
      params.push(options.settledBefore.getTime());
    }
    const store = this.#storeOf();
    const ids = store.listRuns(where.join(" AND "), params, options.limit ?? Number.MAX_SAFE_INTEGER).map((row) => row.id);
    const deleted = store.deleteRuns(ids);
    for (const runId of ids) this.#publish("task:deleted", { runId });
    return deleted;
  }

  /**
   * Sends an event to a run: a `step.waitForEvent()` of `type` receives `payload`. An event sent
   * before the run reaches its step is kept for it (at most {@link MAX_PENDING_EVENTS} per run).
   * @returns false when the run does not exist or has settled
   * @throws TaskSerializationError for a payload that is not JSON or over 1 MiB; TasksFailure TOO_MANY_EVENTS, INVALID_ARGUMENT
   */
  async sendEvent(runId: string, type: string, payload?: unknown): Promise<boolean> {
    checkId(type, "an event type");
    const store = this.#storeOf();
    const row = typeof runId === "string" ? store.run(runId) : undefined;
    if (!row || isTerminal(row.state)) return false;
    const json = serialize(payload, "the event payload");
    if (store.eventCount(runId) >= MAX_PENDING_EVENTS) {
      throw new TasksFailure("TOO_MANY_EVENTS", `Tasks: run ${runId} already holds ${MAX_PENDING_EVENTS} undelivered events`);
    }
    const now = Date.now();
    store.addEvent(runId, type, json, now);
    if (row.state === "waiting" && row.reason === "event" && store.waitingEventType(runId) === type) {
      this.#due(runId, row.definition, now);
      await this.#runner?.rearm(now);
    }
    return true;
  }

  /**
   * Waits for a run to settle, without polling: resolved when this object settles it.
   * @param options - `timeout` (default 1 minute), `signal`
   * @returns the settled run, or `null` when there is no such run
   * @throws TasksFailure WAIT_TIMEOUT when it has not settled in time; the signal's reason when aborted
   */
  async wait(runId: string, options: TaskWaitOptions = {}): Promise<Snapshot | null> {
    const timeoutMs = durationMs(options.timeout ?? 60_000, "the wait's timeout");
    const row = typeof runId === "string" ? this.#storeOf().run(runId) : undefined;
    if (!row) return null;
    if (isTerminal(row.state)) return snapshot(row);
    const signal = options.signal;
    signal?.throwIfAborted();
    return new Promise<Snapshot>((resolve, reject) => {
      const waiters = this.#waiters.get(runId) ?? new Set();
      this.#waiters.set(runId, waiters);
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        waiters.delete(settled);
        if (waiters.size === 0) this.#waiters.delete(runId);
      };
      const settled = (result: Snapshot) => {
        cleanup();
        resolve(result);
      };
      const onAbort = () => {
        cleanup();
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new TasksFailure("WAIT_TIMEOUT", `Tasks: run ${runId} did not settle within ${timeoutMs} ms`));
      }, timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      waiters.add(settled);
    });
  }

  /** @returns the newest runs with their journals (steps, attempts, states): what the inspector shows */
  async inspect(limit = 50): Promise<(Snapshot & { attempt: number; steps: { name: string; kind: string; state: string; attempts: number; wakeAt?: number }[] })[]> {
    const store = this.#storeOf();
    if (!store.exists()) return [];
    return store.listRuns("1", [], Math.min(MAX_LIST, limit)).map((row) => ({
      ...snapshot(row),
      attempt: row.attempt,
      steps: store.steps(row.id).map((step) => ({
        name: step.name,
        kind: step.kind,
        state: step.state,
        attempts: step.attempts,
        ...(step.wake_at !== null && step.state !== "done" ? { wakeAt: step.wake_at } : {}),
      })),
    }));
  }

  // ------------------------------------------------------------------ execution

  /**
   * Starts an attempt of a due run (nothing when one is live in this isolate), in the object's context.
   * @returns once it settled or parked, or after {@link GRACE_MS} while it goes on
   */
  #wake(runId: string): Promise<void> | undefined {
    if (this.#live.has(runId)) return undefined;
    const host = this.#claims?.lifecycle.host;
    const driving = runInContext({ agent: host }, () => this.#drive(runId)).catch((error: unknown) => console.error(`dokit: Tasks could not run ${runId}`, error));
    this.#driving.add(driving);
    void driving.finally(() => {
      this.#driving.delete(driving);
      if (this.#driving.size === 0) this.#rearmNow();
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, GRACE_MS)));
    return Promise.race([driving, grace]).finally(() => {
      if (timer !== undefined) clearTimeout(timer);
    });
  }

  /**
   * The alarm invocation that started attempts awaits them for up to {@link HOLD_MS}, starting the
   * runs that become due meanwhile (a new run, an event, another run's wake). Then it returns, so the
   * object's other alarm work (the Scheduler's, the Queue's, the host's) is not held back by a long
   * step; attempts still running go on, their runs' wakes leased in case the instance is lost.
   */
  async #afterDrain(): Promise<void> {
    const until = Date.now() + HOLD_MS;
    while (this.#driving.size > 0 && Date.now() < until) {
      const kicked = new Promise<void>((resolve) => (this.#kick = resolve));
      // The platform alarm cannot fire while this invocation lasts: wake for the next wake stored
      // (another run's sleep or retry) here, or a long attempt would hold it back.
      const next = this.#jobs?.next();
      const timer = setTimeout(() => this.#kick?.(), Math.max(0, Math.min(next?.due ?? until, until) - Date.now()));
      await Promise.race([Promise.allSettled([...this.#driving]), kicked]);
      clearTimeout(timer);
      this.#kick = undefined;
      const due = this.#jobs?.next();
      if (due && due.due <= Date.now()) await this.#runner?.drain();
    }
  }

  /** After a wake, the runs an attempt held lost it with the old isolate: they are due now. */
  async #recover(): Promise<void> {
    const store = this.#store;
    if (!store?.exists()) return;
    const lost = store.runningRuns(JOBS);
    if (lost.length === 0) return;
    const now = Date.now();
    for (const { id, definition } of lost) if (!this.#live.has(id)) this.#due(id, definition, now);
    await this.#runner?.rearm(now);
  }

  async #drive(runId: string): Promise<void> {
    const store = this.#storeOf();
    const row = store.run(runId);
    if (!row || isTerminal(row.state)) {
      this.#jobs?.delete("id = ?", runId);
      return;
    }
    const handler = this.#definitions[row.definition];
    if (typeof handler !== "function") {
      await this.#settle(row, null, "failed", { error: new MissingTaskDefinitionError(row.definition) });
      return;
    }
    const now = Date.now();
    const lostStep = row.state === "running" ? store.runningStep(runId) : undefined;
    const interrupted = lostStep ? { name: lostStep.name, attempt: lostStep.attempts } : null;
    const claim = crypto.randomUUID();
    store.claim(runId, claim, row.attempt + 1, now);
    if (row.state === "running") {
      this.#publish("task:attempt:interrupted", { runId, definition: row.definition, attempt: row.attempt, ...(interrupted ? { step: interrupted.name, stepAttempt: interrupted.attempt } : {}) });
    }
    this.#publish("task:attempt:started", { runId, definition: row.definition, attempt: row.attempt + 1 });
    const host: AttemptHost = { store, policy: this.#policy, publish: (type, payload) => this.#publish(type, { ...payload, definition: row.definition }) };
    const attempt = new Attempt(host, runId, claim, interrupted);
    this.#live.set(runId, attempt);
    let outcome: Outcome;
    try {
      outcome = await attempt.execute(handler, parse(row.input));
    } finally {
      this.#live.delete(runId);
    }
    await this.#conclude(row, claim, outcome);
  }

  async #conclude(row: RunRow, claim: string, outcome: Outcome): Promise<void> {
    const store = this.#storeOf();
    const runId = row.id;
    switch (outcome.kind) {
      case "lost":
        return;
      case "completed":
        await this.#settle(row, claim, "completed", { result: outcome.result });
        return;
      case "failed":
        await this.#settle(row, claim, "failed", { error: outcome.error });
        return;
      case "parked": {
        if (!store.park(runId, claim, outcome.reason, outcome.wakeAt)) return;
        const now = Date.now();
        // An event that arrived while the attempt ran wakes the run at once.
        const type = outcome.reason === "event" ? store.waitingEventType(runId) : undefined;
        const due = type !== undefined && store.peekEvent(runId, type) ? now : outcome.wakeAt;
        if (due === null) {
          if ((this.#jobs?.delete("id = ?", runId) ?? 0) > 0) await this.#runner?.rearm();
        } else {
          this.#due(runId, row.definition, due);
          await this.#runner?.rearm(due);
        }
        this.#publish("task:waiting", { runId, definition: row.definition, reason: outcome.reason, ...(outcome.wakeAt !== null ? { wakeAt: outcome.wakeAt } : {}) });
        return;
      }
    }
  }

  /**
   * Settles a run: by its attempt (`claim`), or from outside (`null`: a cancel, a missing definition).
   * @returns whether it was settled now (false when the attempt lost it or it had settled)
   */
  async #settle(row: RunRow, claim: string | null, state: "completed" | "failed" | "cancelled", fields: { result?: string | null; error?: unknown; reason?: string | null }): Promise<boolean> {
    const store = this.#storeOf();
    const runId = row.id;
    const settled = store.settle(
      runId,
      claim,
      state,
      { result: fields.result ?? null, ...(fields.error !== undefined ? { error: errorJson(fields.error) } : {}), reason: fields.reason ?? null },
      Date.now(),
    );
    if (!settled) return false;
    if ((this.#jobs?.delete("id = ?", runId) ?? 0) > 0) this.#rearmSoon();
    if (!settled.retain) store.deleteRuns([runId]);
    const view = snapshot(settled);
    for (const waiter of [...(this.#waiters.get(runId) ?? [])]) waiter(view);
    const type: TaskEventType = state === "completed" ? "task:completed" : state === "failed" ? "task:failed" : "task:cancelled";
    this.#publish(type, {
      runId,
      definition: row.definition,
      ...(fields.error !== undefined ? { error: errorMessage(fields.error), ...codeOf(fields.error) } : {}),
      ...(fields.reason ? { reason: fields.reason } : {}),
    });
    if (state === "failed" && this.#options.onError) {
      try {
        await this.#options.onError(fields.error);
      } catch (error) {
        console.error("dokit: Tasks' onError failed", error);
      }
    }
    return true;
  }

  /**
   * Recomputes the alarm once no attempt is live any more (a thousand runs settling together
   * cost one alarm update, not a thousand), so no wake of a settled run is left armed.
   */
  #rearmSoon(): void {
    this.#rearmWanted = true;
    if (this.#driving.size === 0) this.#rearmNow();
  }
  #rearmWanted = false;

  #rearmNow(): void {
    if (!this.#rearmWanted) return;
    this.#rearmWanted = false;
    this.#runner?.rearm().catch((error: unknown) => console.error("dokit: Tasks could not re-arm the alarm", error));
  }

  /** Stores the run's next wake (a same-id replace) and tells a waiting alarm invocation. */
  #due(runId: string, definition: string, due: number): void {
    this.#jobs?.upsert({ id: runId, callback: definition, payload: null, due, spec: "{}", created: Date.now() });
    // A waiting alarm invocation looks again: the wake may be due now, or earlier than the one it waits for.
    this.#kick?.();
  }

  #publish(type: TaskEventType, payload: Record<string, unknown>): void {
    const claims = this.#claims;
    const observer = claims?.dispatch.observer;
    if (!claims || !observer?.since("task")) return;
    observer.emit("task", claims.lifecycle, type, payload);
  }

  #storeOf(): TaskStore {
    if (!this.#store) throw new TasksFailure("NOT_INSTALLED", `${OWNER} is not installed: add it with Lifecycle.install(this).use(tasks)`);
    return this.#store;
  }
}

/** @throws TasksFailure INVALID_ARGUMENT unless `value` is a non-empty string of at most {@link MAX_ID} characters */
function checkId(value: unknown, what: string): void {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_ID) {
    throw new TasksFailure("INVALID_ARGUMENT", `Tasks: ${what} must be a non-empty string of at most ${MAX_ID} characters`);
  }
}

function codeOf(error: unknown): { code?: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? { code } : {};
}

function receipt(row: RunRow, accepted: boolean): TaskReceipt {
  return { runId: row.id, definition: row.definition, accepted, state: row.state as TaskRunState, createdAt: row.created };
}

/** @returns the reference-shaped view of a run */
function snapshot(row: RunRow): Snapshot {
  const common = {
    runId: row.id,
    definition: row.definition,
    createdAt: row.created,
    // SAFETY: stored from a metadata object.
    ...(row.metadata !== null ? { metadata: JSON.parse(row.metadata) as Record<string, never> } : {}),
  };
  const status = row.status !== null ? { statusMessage: row.status } : {};
  switch (row.state) {
    case "running":
      return { ...common, state: "running", attempt: row.attempt, startedAt: row.started_at ?? row.created, ...status };
    case "waiting":
      // SAFETY: a waiting run's reason is a TaskWaitReason (written by park()); an event wait without a timeout has no wake time.
      return { ...common, state: "waiting", reason: row.reason as "sleep", wakeAt: row.wake_at ?? Number.POSITIVE_INFINITY, ...status };
    case "completed":
      // SAFETY: the JSON of what the handler returned.
      return { ...common, state: "completed", result: parse(row.result) as TaskValue, settledAt: row.settled ?? 0 };
    case "failed": {
      const { name, message } = JSON.parse(row.error ?? '{"name":"Error","message":""}') as { name: string; message: string };
      return { ...common, state: "failed", error: { name, message }, settledAt: row.settled ?? 0 };
    }
    case "cancelled":
      return { ...common, state: "cancelled", ...(row.reason !== null ? { reason: row.reason } : {}), settledAt: row.settled ?? 0 };
    default:
      return { ...common, state: "pending" };
  }
}
