import { ROW_BYTES } from "./bytes";

// Text split across SQLite rows (State's JSON values): parts of at most ROW_BYTES
// UTF-8 bytes each, the same bound as bytes.ts.

/** A JSON text cut into the parts stored one per row, and its UTF-8 length. */
export interface Rows {
  /** One part for a value that fits a row; otherwise the parts in order, each at most {@link ROW_BYTES} as UTF-8. */
  parts: string[];
  /** The text's UTF-8 length, or `-1` when it fits one row without being measured. */
  bytes: number;
}

const encoder = new TextEncoder();
let scratch: Uint8Array | undefined;

/**
 * Cuts `json` into parts of at most {@link ROW_BYTES} UTF-8 bytes, never between
 * the two halves of a surrogate pair (SQLite would store a lone half as U+FFFD).
 * Text short enough to fit one row whatever its characters is neither measured nor copied.
 */
export function splitRows(json: string): Rows {
  // Every UTF-16 unit takes at most 3 UTF-8 bytes.
  if (json.length * 3 <= ROW_BYTES) return { parts: [json], bytes: -1 };
  scratch ??= new Uint8Array(ROW_BYTES);
  const parts: string[] = [];
  let bytes = 0;
  for (let offset = 0; offset < json.length; ) {
    // The slice holds ROW_BYTES units and the buffer ROW_BYTES bytes; encodeInto never splits a pair,
    // and a high half alone at the slice's end (3 bytes) cannot fit after ROW_BYTES - 1 units of at
    // least a byte each, so a part never ends inside a pair. The first code point always fits, so no
    // part is empty.
    const slice = json.slice(offset, offset + ROW_BYTES);
    const { read, written } = encoder.encodeInto(slice, scratch);
    parts.push(read === slice.length ? slice : slice.slice(0, read));
    bytes += written;
    offset += read;
  }
  return { parts, bytes };
}

let wideScratch: Uint8Array | undefined;

/**
 * {@link splitRows} with parts of at most `max` UTF-8 bytes (Sessions cuts at 1.5 MiB, where a row
 * holds little besides the part). A function of its own so the bundles of splitRows' users stay as
 * they are (their size is guarded).
 */
export function splitRowsAt(json: string, max: number): Rows {
  if (json.length * 3 <= max) return { parts: [json], bytes: -1 };
  if (!wideScratch || wideScratch.byteLength !== max) wideScratch = new Uint8Array(max);
  const parts: string[] = [];
  let bytes = 0;
  for (let offset = 0; offset < json.length; ) {
    // As in splitRows: `max` units into `max` bytes never ends inside a surrogate pair, and never empty.
    const slice = json.slice(offset, offset + max);
    const { read, written } = encoder.encodeInto(slice, wideScratch);
    parts.push(read === slice.length ? slice : slice.slice(0, read));
    bytes += written;
    offset += read;
  }
  return { parts, bytes };
}
