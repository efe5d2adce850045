import type { InferOutput, StandardSchema } from "../schema/standard-schema";
import type { StateCheck, StateSource, StateValidator } from "./validate";

/** Options of `State`. */
export interface StateOptions<T> {
  /** The value of a new object; stored on first read (once), never re-validated. */
  initialState: T;
  /**
   * Checks every change, from the server and from clients: a synchronous function
   * that throws to refuse, or a Standard Schema (e.g. zod 4) whose output is stored.
   */
  validate?: StateValidator<T>;
  /**
   * Runs after a change is stored. Errors are logged and never reach the caller;
   * `set()` does not wait for an async hook, a client's state frame does.
   * @param state - the stored value
   * @param source - `"server"`, or the connection that sent the change
   */
  onChanged?: (state: T, source: StateSource) => void | Promise<void>;
}

/** {@link StateOptions} with a Standard Schema: the state's type is the schema's output. */
export interface SchemaStateOptions<S extends StandardSchema> {
  /** The value of a new object; stored on first read (once), never re-validated. */
  initialState: NoInfer<InferOutput<S>>;
  /** The schema every change must pass; its output is what gets stored. Must validate synchronously. */
  validate: S;
  /** Runs after a change is stored (see {@link StateOptions.onChanged}). */
  onChanged?: (state: InferOutput<S>, source: StateSource) => void | Promise<void>;
}

/** {@link StateOptions} without a schema: the state's type is `initialState`'s. */
export interface CheckedStateOptions<T> extends StateOptions<T> {
  validate?: StateCheck<T>;
}
