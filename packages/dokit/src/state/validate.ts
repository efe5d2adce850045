import { describeIssues, isStandardSchema, type StandardSchema } from "../schema/standard-schema";
import { isThenable } from "../thenable/is-thenable";
import type { Connection } from "../lifecycle/connection";
import { DokitError, errorMessage } from "../lifecycle/errors";
import type { StateErrorCode } from "./errors";

/** Who changed the state: `"server"` for the object's own code, or the connection that sent the change. */
export type StateSource = "server" | Connection;

/** A synchronous check that throws to refuse a value; what it returns is ignored. */
export type StateCheck<T> = (next: T, source: StateSource) => void;

/**
 * Validates a state change: a {@link StateCheck} function, or a Standard Schema
 * value (zod 4, valibot, arktype) whose output is what gets stored.
 */
export type StateValidator<T> = StateCheck<T> | StandardSchema<unknown, T>;

/**
 * Runs the validator on a proposed value.
 * @returns the value to store (the schema's output, or `next` itself)
 * @throws DokitError `INVALID_STATE` when the value is refused, `INVALID_ARGUMENT` for an asynchronous validator
 */
export function validateState<T>(validator: StateValidator<T> | undefined, next: unknown, source: StateSource): T {
  // SAFETY: without a validator the State trusts its callers (and its clients) with T.
  if (validator === undefined) return next as T;
  if (isStandardSchema(validator)) return validateWithSchema(validator, next);
  let returned: unknown;
  try {
    // SAFETY: the check receives a candidate T; refusing values that are not is its job.
    returned = validator(next as T, source);
  } catch (error) {
    throw rejected(errorMessage(error), error);
  }
  if (isThenable(returned)) {
    returned.then(undefined, () => {}); // its outcome is ignored; never leave it unhandled
    throw asynchronous("validate function returned a Promise", "make it synchronous (throw to refuse)");
  }
  // SAFETY: the check accepted the value.
  return next as T;
}

function validateWithSchema<T>(schema: StandardSchema<unknown, T>, next: unknown): T {
  const result = schema["~standard"].validate(next);
  if (isThenable(result)) {
    result.then(undefined, () => {});
    throw asynchronous(
      `${schema["~standard"].vendor} schema validated asynchronously`,
      "remove async refinements or transforms from the state schema",
    );
  }
  if (result.issues) throw rejected(describeIssues(result.issues));
  return result.value;
}

function rejected(reason: string, cause?: unknown): DokitError {
  return new DokitError<StateErrorCode>("INVALID_STATE", `State rejected the value: ${reason}`, cause === undefined ? undefined : { cause });
}

function asynchronous(what: string, fix: string): DokitError {
  return new DokitError<StateErrorCode>(
    "INVALID_ARGUMENT",
    `the State's ${what}; set() is synchronous, so validation must be too: ${fix}`,
  );
}
