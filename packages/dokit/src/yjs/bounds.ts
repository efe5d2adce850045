import { convertUpdateFormatV2ToV1, parseUpdateMetaV2, UpdateDecoderV1 } from "yjs";
import type { Doc } from "yjs";
import { Reader } from "./wire";

// What one update adds to a document, counted before it is stored: its structs (each Yjs item,
// GC or skip) plus its deleted ranges (a deletion inside an item splits it, up to two more structs
// per range). A struct costs about 190 bytes of heap once applied (bench/yjs-structs.ts), so the
// count, not the update's bytes, is what bounds a document's memory: 1M one-character items are an
// 8 MB update and 200 MB of heap.

/** Thrown for a client's update over one of the document's bounds: its sender is closed, nothing is stored. */
export class OverBound extends Error {
  override readonly name = "OverBound";
}

/** Thrown by the counter once an update holds more than it may: counting stops there. */
class OverLimit extends Error {}

/**
 * Yjs's own v1 decoder, counting the structs it reads. Yjs's `parseUpdateMetaV2` walks an update with
 * the decoder it is given, one struct at a time and none kept, and reads one info byte per struct.
 */
class CountingDecoder extends UpdateDecoderV1 {
  /** The decoder of the walk in progress (the walk is synchronous). */
  static current: CountingDecoder | undefined;
  /** The count past which the walk stops. */
  static limit = Number.POSITIVE_INFINITY;
  count = 0;

  constructor(decoder: ConstructorParameters<typeof UpdateDecoderV1>[0]) {
    super(decoder);
    CountingDecoder.current = this;
  }

  override readInfo(): number {
    if (++this.count > CountingDecoder.limit) throw new OverLimit();
    return super.readInfo();
  }
}

/**
 * @returns the structs of a v1 update plus its deleted ranges, or `limit + 1` as soon as the count
 *   passes `limit` (the rest is not read)
 * @throws what Yjs throws for an update it cannot read
 */
export function countStructs(update: Uint8Array, limit = Number.POSITIVE_INFINITY): number {
  CountingDecoder.limit = limit;
  CountingDecoder.current = undefined;
  try {
    parseUpdateMetaV2(update, CountingDecoder);
  } catch (error) {
    if (error instanceof OverLimit) return limit + 1;
    throw error;
  } finally {
    CountingDecoder.limit = Number.POSITIVE_INFINITY;
  }
  // SAFETY: the walk above set it (TypeScript's narrowing does not see the constructor's assignment).
  const decoder = CountingDecoder.current as CountingDecoder | undefined;
  CountingDecoder.current = undefined;
  if (!decoder) return 0;
  // The delete set follows the structs: per client its id, then its ranges (clock, length).
  // SAFETY: lib0's Decoder keeps the array it reads and its position as these two fields.
  const rest = decoder.restDecoder as unknown as { arr: Uint8Array; pos: number };
  const reader = new Reader(rest.arr.subarray(rest.pos));
  let count = decoder.count;
  if (reader.done) return count;
  for (let clients = reader.uint(), i = 0; i < clients; i++) {
    reader.uint();
    const ranges = reader.uint();
    count += 2 * ranges;
    if (count > limit) return limit + 1;
    for (let r = 0; r < ranges; r++) reader.uint(), reader.uint();
  }
  return count;
}

/** The last update waiting in a document that was counted, and its count (it changes only when updates arrive out of order). */
let pendingCounted: [Uint8Array, number] | undefined;

/** @returns the structs the document holds, with those of updates waiting for what they build on (kept by Yjs in v2) */
export function documentStructs(doc: Doc): number {
  let count = 0;
  for (const structs of doc.store.clients.values()) count += structs.length;
  for (const waiting of [doc.store.pendingStructs?.update, doc.store.pendingDs]) {
    if (!waiting) continue;
    if (pendingCounted?.[0] !== waiting) pendingCounted = [waiting, countStructs(convertUpdateFormatV2ToV1(waiting))];
    count += pendingCounted[1];
  }
  return count;
}
