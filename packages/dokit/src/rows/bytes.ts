// Bytes split across SQLite rows. A Durable Object's SQLite refuses a string,
// BLOB or row over 2 MB (`SQLITE_TOOBIG`; local workerd allows more, production
// does not), so a value that may be larger is stored as parts of at most
// ROW_BYTES, one per row, and joined again when read.

/** The most bytes put in one SQLite row: well under the platform's 2 MB, leaving room for the row's other columns. */
export const ROW_BYTES = 1024 * 1024;

/**
 * @returns `bytes` cut into parts of at most `max` bytes, in order (views of `bytes`, no copy);
 *   one part, possibly empty, for a value that fits a row
 */
export function splitBytes(bytes: Uint8Array, max = ROW_BYTES): Uint8Array[] {
  if (bytes.byteLength <= max) return [bytes];
  const parts: Uint8Array[] = [];
  for (let at = 0; at < bytes.byteLength; at += max) parts.push(bytes.subarray(at, at + max));
  return parts;
}

/** @returns the parts (as SQLite returns BLOBs) joined into one array; a single part is returned without a copy */
export function joinBytes(parts: readonly (ArrayBuffer | Uint8Array)[]): Uint8Array {
  if (parts.length === 1) return asBytes(parts[0] as ArrayBuffer | Uint8Array);
  let size = 0;
  for (const part of parts) size += part.byteLength;
  const whole = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    whole.set(asBytes(part), at);
    at += part.byteLength;
  }
  return whole;
}

function asBytes(part: ArrayBuffer | Uint8Array): Uint8Array {
  return part instanceof Uint8Array ? part : new Uint8Array(part);
}
