import { ContentString, createID, decodeUpdate, Item, UpdateEncoderV1 } from "yjs";
import type { GC, Skip } from "yjs";
import { Writer } from "./wire";

// One Yjs update cut into several, each small enough for one WebSocket message (the runtime
// refuses a message over 32 MiB). A Yjs v1 update is, per client, a run of structs from a
// starting clock, then a delete set. The pieces here are runs of whole structs; a text item
// larger than a piece is sliced the way Yjs slices items when it merges updates (never inside
// a surrogate pair); the delete set goes with the last piece. A client applies the pieces in
// any order: an item whose neighbours come later waits in Yjs's pending structs until they do.

/** The most bytes of document one message carries: half the runtime's 32 MiB message limit. */
export const MESSAGE_BYTES = 16 * 1024 * 1024;

type Struct = Item | GC | Skip;
/** A run of one client's structs, encoded. */
interface Run {
  client: number;
  clock: number;
  /** The clock after the run's last struct. */
  end: number;
  structs: Uint8Array[];
}

/**
 * @returns `update` when it fits `maxBytes`; else updates that together carry the same content,
 *   each at most `maxBytes` (save a single struct Yjs cannot slice, such as one large embedded value)
 */
export function splitUpdate(update: Uint8Array, maxBytes = MESSAGE_BYTES): Uint8Array[] {
  if (update.byteLength <= maxBytes) return [update];
  const { structs, ds } = decodeUpdate(update);
  const pieces: Uint8Array[] = [];
  let runs: Run[] = [];
  let size = 0;
  for (const struct of structs) {
    for (const slice of slices(struct, maxBytes)) {
      const bytes = encodeStruct(slice);
      if (size > 0 && size + bytes.byteLength > maxBytes) {
        pieces.push(writePiece(runs, undefined));
        runs = [];
        size = 0;
      }
      const { client, clock } = slice.id;
      let run = runs.at(-1);
      if (!run || run.client !== client || run.end !== clock) runs.push((run = { client, clock, end: clock, structs: [] }));
      run.structs.push(bytes);
      run.end = clock + slice.length;
      size += bytes.byteLength;
    }
  }
  pieces.push(writePiece(runs, ds.clients));
  return pieces;
}

/** @returns the struct, or for a text item over `maxBytes` its slices in order */
function* slices(struct: Struct, maxBytes: number): Generator<Struct> {
  // A UTF-16 unit is at most 3 bytes of UTF-8.
  const units = Math.floor(maxBytes / 3) - 64;
  if (!(struct instanceof Item) || !(struct.content instanceof ContentString) || struct.length <= units) return yield struct;
  let left: Item = struct;
  while (left.length > units) {
    const text = (left.content as ContentString).str;
    // Never between the halves of a surrogate pair (Yjs would store U+FFFD for both).
    const code = text.charCodeAt(units - 1);
    const cut = code >= 0xd800 && code <= 0xdbff ? units - 1 : units;
    const { client, clock } = left.id;
    // As Yjs's own sliceStruct: the right part's origin is the left part's last character.
    const right = new Item(
      createID(client, clock + cut),
      null,
      createID(client, clock + cut - 1),
      null,
      left.rightOrigin,
      left.parent,
      left.parentSub,
      left.content.splice(cut),
    );
    left.length = cut;
    yield left;
    left = right;
  }
  yield left;
}

/** @returns one struct in the v1 encoding */
function encodeStruct(struct: Struct): Uint8Array {
  const encoder = new UpdateEncoderV1();
  struct.write(encoder, 0);
  return encoder.toUint8Array();
}

/** @returns a v1 update of these runs, with the delete set when given (else an empty one) */
function writePiece(runs: readonly Run[], deletes: Map<number, { clock: number; len: number }[]> | undefined): Uint8Array {
  const writer = new Writer().uint(runs.length);
  for (const run of runs) {
    writer.uint(run.structs.length).uint(run.client).uint(run.clock);
    for (const struct of run.structs) writer.raw(struct);
  }
  writer.uint(deletes?.size ?? 0);
  for (const [client, items] of deletes ?? []) {
    writer.uint(client).uint(items.length);
    for (const { clock, len } of items) writer.uint(clock).uint(len);
  }
  return writer.finish();
}
