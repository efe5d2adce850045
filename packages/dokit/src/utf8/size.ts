// The size of text as UTF-8: what SQLite stores and its row limit counts, and
// what byte bounds on stored or relayed values are stated in.

/** @returns the size of `text` as UTF-8, in bytes (what SQLite stores and its row limit counts) */
export function utf8Length(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}

/**
 * @returns whether `text` takes more than `max` bytes as UTF-8; a string of n characters takes at most
 *   3n bytes, so most short values are answered without encoding them
 */
export function overBytes(text: string, max: number): boolean {
  return text.length * 3 > max && utf8Length(text) > max;
}
