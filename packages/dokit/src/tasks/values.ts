import { overBytes, utf8Length } from "../utf8/size";
import { MAX_SERIALIZED_BYTES, TaskSerializationError } from "./errors";

/**
 * @param what - what is being stored, for the error
 * @returns `value` as JSON text (`null` for `undefined`)
 * @throws TaskSerializationError when it is not JSON (a function, a BigInt, a cycle) or over {@link MAX_SERIALIZED_BYTES}
 */
export function serialize(value: unknown, what: string): string | null {
  if (value === undefined) return null;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new TaskSerializationError(what, `is not JSON-serializable (${(error as Error).message})`);
  }
  if (json === undefined) throw new TaskSerializationError(what, `is not JSON-serializable (a ${typeof value})`);
  if (overBytes(json, MAX_SERIALIZED_BYTES)) {
    throw new TaskSerializationError(what, `takes ${utf8Length(json)} bytes as JSON; at most ${MAX_SERIALIZED_BYTES} (1 MiB) are stored: keep large data elsewhere and pass its key`);
  }
  return json;
}

/** @returns the stored value (`undefined` for none) */
export function parse(json: string | null): unknown {
  return json === null ? undefined : JSON.parse(json);
}
