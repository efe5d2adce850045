import type { InferOutput, StandardSchema } from "../schema/standard-schema";
import type { Capability, Claims, Dispatch } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { DokitError, errorMessage } from "../lifecycle/errors";
import type { Lifecycle } from "../lifecycle/lifecycle";
import { lifecycleOf, type Wakeable, WORKS_UNATTACHED } from "../lifecycle/wake";
import { isStateFrame, STATE, STATE_ERROR, type StateErrorFrame } from "../protocol/agents";
import { trySend } from "../frames/send";
import { publishState } from "./events";
import { splitRows } from "../rows/text";
import { serializeState } from "./serialize";
import { StateStore, type StoredRow } from "./storage";
import type { CheckedStateOptions, SchemaStateOptions, StateOptions } from "./options";
import { type StateSource, validateState } from "./validate";
import type { StateErrorCode } from "./errors";

/**
 * How `new State(...)` finds the state's type: from a schema's output, from an
 * explicit type argument, or from `initialState`. (A class constructor cannot
 * order these, so `State` is the class seen through this interface; otherwise
 * `initialState: { status: "idle" }` would widen a schema's `"idle" | "busy"` to `string`.)
 */
export interface StateConstructor {
  /** With a Standard Schema (zod 4, valibot, arktype): the state's type is the schema's output. */
  new <S extends StandardSchema>(options: SchemaStateOptions<S>): State<InferOutput<S>>;
  /** With an explicit type: `new State<Board>({ ... })`. */
  new <T = never>(options: StateOptions<NoInfer<T>>): State<T>;
  /** Without a schema: the state's type is `initialState`'s. */
  new <T>(options: CheckedStateOptions<T>): State<T>;
  readonly prototype: State<unknown>;
}

const READONLY: string = JSON.stringify({ type: STATE_ERROR, error: "Connection is readonly" } satisfies StateErrorFrame);
const REJECTED: string = JSON.stringify({ type: STATE_ERROR, error: "State update rejected" } satisfies StateErrorFrame);

/**
 * One durable, validated value, stored in the object's SQLite storage and
 * synced to clients through `new WebSockets({ state })`.
 */
class StateCapability<T = unknown> implements Capability {
  readonly capabilityName = "State";
  readonly #options: StateOptions<T>;
  #lifecycle: Lifecycle | undefined;
  #dispatch: Dispatch | undefined;
  #store: StateStore | undefined;
  #loaded = false;
  // SAFETY: read only once `#loaded` is true.
  #value = undefined as T;
  /** The stored JSON of `#value` (set with it). */
  #json = "";
  /** The state frame of `#value`, built on first use after each change. */
  #frame: string | undefined;
  /** Where changes are sent to clients, once a WebSockets syncs this state. */
  #sync: StateBroadcast | undefined;

  /** @param options - `initialState`, `validate` and `onChanged` */
  constructor(options: StateOptions<T>) {
    this.#options = options;
  }

  attach(claims: Claims): void {
    this.#lifecycle = claims.lifecycle;
    this.#dispatch = claims.dispatch;
    // {"type":"cf_agent_state","state":<json>}: a client's change, on protocol-enabled connections.
    // {"type":"cf_agent_state","state":…}
    claims.frame(STATE, (connection, frame, context) => this.#applyFrame(connection, frame, context.readonly), { protocolOnly: true, needsWiring: true });
  }

  /**
   * The current value: read from storage once (seeding `initialState` on a new
   * object), then from memory.
   * @returns the stored value
   */
  get(): T {
    if (!this.#loaded) this.#load();
    return this.#value;
  }

  /**
   * Validates, stores and caches a new value, then calls `onChanged`.
   * @param next - the new value (JSON-serializable, at most `MAX_STATE_BYTES`, 32 MiB less 1 KiB, as JSON)
   * @param source - who made the change; `"server"` by default
   * @returns the stored value (a schema's output)
   * @throws DokitError `INVALID_STATE` (refused or not serializable) or `STATE_TOO_LARGE`; nothing is stored then and the previous value stays
   */
  set(next: T, source: StateSource = "server"): T {
    const { value } = this.#commit(next, source);
    this.#broadcast(source);
    void this.#notify(value, source);
    return value;
  }

  // ------------------------------------------------------------------ protocol

  /**
   * The state frame, `{"type":"cf_agent_state","state":<json>}`, with the current value: the same
   * string until the value changes.
   * @returns the frame, serialized
   */
  stateFrame(): string {
    if (!this.#loaded) this.#load();
    return (this.#frame ??= `{"type":"${STATE}","state":${this.#json}}`);
  }

  /**
   * Connects this state to the WebSockets that carries it: from now on every change is sent, through
   * `broadcast`, to every protocol-enabled connection but the one that made it. Called by WebSockets.
   * @param broadcast - sends a serialized frame to every protocol-enabled connection but `except`
   */
  syncThrough(broadcast: StateBroadcast): void {
    this.#sync = broadcast;
  }

  /** Sends the stored value to every protocol-enabled connection but `source`, when a WebSockets syncs it. */
  #broadcast(source: StateSource): void {
    const sync = this.#sync;
    if (sync) sync(this.stateFrame(), source === "server" ? undefined : source);
  }

  // ------------------------------------------------------------------ changes

  #commit(next: unknown, source: StateSource): { value: T; json: string } {
    let stored: { value: T; json: string; lossy: boolean };
    try {
      const value = validateState(this.#options.validate, next, source);
      const serialized = serializeState(value);
      this.#storeOf().write(serialized.parts);
      stored = { value, ...serialized };
    } catch (error) {
      // SAFETY: a DokitError carries a string `code`; other thrown values have none (INTERNAL).
      this.#observe(source, undefined, next, (error as { code?: string } | null)?.code ?? "INTERNAL");
      throw error;
    }
    const { value, json, lossy } = stored;
    // Cache what a fresh instance would read back, so memory and storage agree.
    // SAFETY: `json` is the serialization of a T.
    this.#value = lossy ? (JSON.parse(json) as T) : value;
    this.#json = json;
    this.#frame = undefined;
    this.#loaded = true;
    this.#observe(source, json, this.#value);
    return { value: this.#value, json };
  }

  /** Publishes `state:update`, or `state:reject` with a `code`, through an installed Observability. */
  #observe(source: StateSource, json: string | undefined, value: unknown, code?: string): void {
    const observer = this.#dispatch?.observer;
    if (observer && this.#lifecycle) publishState(observer, this.#lifecycle, source, json, value, code);
  }

  /** @returns a promise when `onChanged` is async (it never rejects), else `undefined` */
  #notify(value: T, source: StateSource): Promise<void> | undefined {
    const onChanged = this.#options.onChanged;
    if (!onChanged) return undefined;
    try {
      const pending = onChanged(value, source);
      if (pending && typeof pending.then === "function") return Promise.resolve(pending).catch(logHookError);
    } catch (error) {
      logHookError(error);
    }
    return undefined;
  }

  #applyFrame(connection: Connection, frame: Record<string, unknown>, readonly: boolean): boolean | Promise<boolean> {
    if (!isStateFrame(frame)) return false;
    if (readonly) {
      trySend(connection, READONLY);
      this.#sendStored(connection);
      this.#observe(connection, undefined, frame.state, "READONLY");
      return true;
    }
    let value: T;
    try {
      const stored = this.#commit(frame.state, connection);
      value = stored.value;
      // A schema may have changed the value (coercion, defaults): the sender gets what was stored.
      if (this.#options.validate && stored.json !== JSON.stringify(frame.state)) trySend(connection, this.stateFrame());
    } catch (error) {
      // The reason stays in the log; the client gets the protocol's fixed text.
      if (error instanceof DokitError) console.warn(`dokit: refused a state change from connection ${connection.id}: ${error.message}`);
      else console.error(`dokit: failed to store a state change from connection ${connection.id}`, error);
      trySend(connection, REJECTED);
      this.#sendStored(connection);
      return true;
    }
    this.#broadcast(connection);
    // Awaited so the message handler ends after onChanged; other frames keep flowing meanwhile.
    const pending = this.#notify(value, connection);
    return pending ? pending.then(() => true) : true;
  }

  /**
   * Follows a refusal with the stored value, to the refused connection only: its view may hold its
   * own earlier, accepted changes (a sender is not echoed its own), or (the official client) the
   * refused value itself, and both clients take a state frame as the server's value.
   */
  #sendStored(connection: Connection): void {
    let frame: string;
    try {
      frame = this.stateFrame();
    } catch (error) {
      console.error("dokit: could not read the state to resend it after a refusal", error);
      return;
    }
    trySend(connection, frame);
  }

  // ------------------------------------------------------------------ loading

  #load(): void {
    const store = this.#storeOf();
    const own = store.read();
    let loaded: { value: T; json: string };
    if (own) {
      // A corrupt row is left in place (a read never destroys data); the next set() replaces it.
      loaded = this.#parse(own, "dokit_state") ?? this.#initial();
    } else {
      // An object that used the reference implementation keeps its value: adopt its row once.
      loaded = this.#parse(store.readReference(), "cf_agents_state (the reference implementation's table)") ?? this.#initial();
      store.write(splitRows(loaded.json).parts);
    }
    this.#value = loaded.value;
    this.#json = loaded.json;
    this.#frame = undefined;
    this.#loaded = true;
  }

  /** @returns the parsed row, or `undefined` (with a warning) when it is corrupt or absent */
  #parse(row: StoredRow, table: string): { value: T; json: string } | undefined {
    if (!row) return undefined;
    try {
      if (row.corrupt) throw new TypeError(row.corrupt);
      if (typeof row.value !== "string") {
        throw new TypeError(`the value column holds ${row.value === null ? "NULL" : typeof row.value}`);
      }
      // SAFETY: the row was written from a validated T.
      return { value: JSON.parse(row.value) as T, json: row.value };
    } catch (error) {
      const reason = errorMessage(error);
      console.warn(`dokit: the stored state in ${table} of ${this.#name()} is corrupt (${reason}); using initialState`);
      return undefined;
    }
  }

  /** @returns a copy of `initialState` and its JSON (the option object itself is never handed out) */
  #initial(): { value: T; json: string } {
    if (this.#options.initialState === undefined) {
      throw new DokitError<StateErrorCode>("INVALID_STATE", "State needs an initialState: new State({ initialState: … }) gives the value a new object starts with");
    }
    const { json } = serializeState(this.#options.initialState);
    // SAFETY: the JSON copy of a T.
    return { value: JSON.parse(json) as T, json };
  }

  /** The store, made on first use (a wake that never touches the state makes none). */
  #storeOf(): StateStore {
    const lifecycle = lifecycleOf(this, this.#lifecycle);
    if (!lifecycle) {
      throw new DokitError<StateErrorCode>("NOT_INSTALLED", "this State is not installed yet: Lifecycle.install(this).use(state)");
    }
    return (this.#store ??= new StateStore(lifecycle.ctx));
  }

  #name(): string {
    const lifecycle = lifecycleOf(this, this.#lifecycle);
    return lifecycle ? `${lifecycle.className}/${lifecycle.name}` : "the object";
  }
}

// Works before it is attached (lifecycle/wake.ts): it claims the state frame alone.
(StateCapability.prototype as Wakeable)[WORKS_UNATTACHED] = true;

/** Sends a serialized frame to every protocol-enabled connection but `except` (WebSockets' side of syncing a state). */
export type StateBroadcast = (frame: string, except: Connection | undefined) => void;

/** A durable, validated value synced to clients; see {@link StateConstructor} for how its type is found. */
export type State<T = unknown> = StateCapability<T>;
// SAFETY: every signature builds the same class; they differ only in how T is inferred.
export const State = StateCapability as StateConstructor;

function logHookError(error: unknown): void {
  console.error("dokit: State onChanged failed", error);
}
