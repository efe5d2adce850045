import { Reader, Writer } from "./wire";

// Awareness (cursors, names) as the y-protocols wire carries it: an update is a varUint
// count, then per client its id, its clock and its state as JSON text (`null` once it is
// gone). The server keeps no Awareness object (no timers): each connection's latest entries
// live in its attachment, so they survive hibernation, and are merged when someone asks.

/** One client's awareness: `[clientID, clock, state as JSON text]` (`"null"`: the client is gone). */
export type AwarenessEntry = [number, number, string];

/** @returns the entries of an awareness update @throws MalformedMessage when it is cut short */
export function readAwareness(update: Uint8Array): AwarenessEntry[] {
  const reader = new Reader(update);
  const count = reader.uint();
  const entries: AwarenessEntry[] = [];
  for (let i = 0; i < count; i++) entries.push([reader.uint(), reader.uint(), reader.string()]);
  return entries;
}

/** @returns an awareness update carrying `entries` */
export function writeAwareness(entries: readonly AwarenessEntry[]): Uint8Array {
  const writer = new Writer().uint(entries.length);
  for (const [client, clock, state] of entries) writer.uint(client).uint(clock).string(state);
  return writer.finish();
}

/** @returns `kept` with `incoming` merged in: per client, the entry with the higher clock (a newer `null` included) */
export function mergeAwareness(kept: readonly AwarenessEntry[], incoming: readonly AwarenessEntry[]): AwarenessEntry[] {
  const byClient = new Map<number, AwarenessEntry>();
  for (const entry of kept) byClient.set(entry[0], entry);
  for (const entry of incoming) {
    const current = byClient.get(entry[0]);
    if (!current || current[1] <= entry[1]) byClient.set(entry[0], entry);
  }
  return [...byClient.values()];
}

/**
 * @returns the entries that tell others these clients left: each one's clock plus one, state `null`
 *   (at most 2^53 - 1: y-protocols also takes a `null` at the clock it holds)
 */
export function leaving(entries: readonly AwarenessEntry[]): AwarenessEntry[] {
  return entries.filter((entry) => entry[2] !== "null").map(([client, clock]) => [client, Math.min(clock + 1, Number.MAX_SAFE_INTEGER), "null"]);
}
