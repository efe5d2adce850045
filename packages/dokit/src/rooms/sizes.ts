// How big a batch of room messages (or of presence entries) is when it crosses from one object to
// another, so every batch stays well under the 32 MiB a Durable Object RPC call carries, whatever
// its characters are.

import type { OutgoingMessage } from "./types";

/**
 * The most estimated bytes of messages one batch carries between objects: a delivery (to a shard,
 * or through a relay), a `since` answer, a shard's publish batch. Always at least one message.
 */
export const BATCH_BYTES = 8 * 1024 * 1024;

/** The most estimated bytes of one message (body, ids and filters): a batch of one always fits. */
export const MESSAGE_BYTES = 6 * 1024 * 1024;

/** Bytes counted per message for its seq, the keys around it and the frame of the call. */
const OVERHEAD = 64;

/**
 * @returns an upper bound of the bytes a message takes in any call between a room's objects, from
 * its strings' UTF-16 lengths: a string with one non-Latin-1 character is copied at 2 bytes per
 * UTF-16 unit, a body travels as JSON inside the JSON of a delivery (escaping at most doubles its
 * length), and a relay gets that delivery as one string: 4 bytes per unit covers all of these (and
 * UTF-8, at most 3 bytes per unit).
 */
export function estimateBytes(data: string, ...more: (string | null | undefined)[]): number {
  let units = data.length;
  for (const text of more) units += text?.length ?? 0;
  return 4 * units + OVERHEAD;
}

/** @returns {@link estimateBytes} of a message on its way to the sequencer */
export function outgoingBytes(message: OutgoingMessage): number {
  let filters = message.tag?.length ?? 0;
  for (const id of message.except ?? []) filters += id.length + 3;
  return estimateBytes(message.data, message.from, message.id) + 4 * filters;
}

/**
 * The most estimated bytes of presence entries one `presence` call from a shard to the sequencer
 * carries: a larger set goes in numbered parts, which the sequencer applies together.
 */
export const PRESENCE_PART_BYTES = 2 * 1024 * 1024;

/** @returns {@link estimateBytes} of a presence entry (`json` absent: an id that left) */
export function presenceBytes(id: string, json?: string): number {
  return 4 * (id.length + (json?.length ?? 0)) + 16;
}
