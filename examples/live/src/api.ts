// The live room's messages, shared by the Worker, the shards and the page. Every message is one
// room message (dokit/rooms): the sequencer gives it its seq, and every tab on every shard gets it once.

/** How many shards a room's viewers spread over: small, so the demo runs on one machine. */
export const SHARD_COUNT = 4;
/** The reactions a viewer can send. */
export const REACTIONS = ["👏", "❤️", "🎉", "❓"] as const;
export type Reaction = (typeof REACTIONS)[number];
/** The longest name and text the page shows (the shard bounds a whole message by MAX_MESSAGE_BYTES). */
export const MAX_NAME = 32;
export const MAX_TEXT = 500;
/** The largest message a shard takes, as JSON: a refused one is answered ROOM_REJECTED to its sender only. */
export const MAX_MESSAGE_BYTES = 2048;

/**
 * What travels in the room: a viewer's line, a viewer's reaction, or the host's announcement
 * (published by the Worker with publishToRoom, so it has no `from`).
 */
export type LiveMessage =
  | { kind: "say"; name: string; text: string }
  | { kind: "react"; name: string; emoji: Reaction }
  | { kind: "announce"; text: string };

/** A room name: letters, digits, `_` and `-`, 1 to 64 of them. */
export const ROOM_NAME = /^[\w-]{1,64}$/;

/**
 * Reads a room message's data. Any viewer can publish any JSON, so the page shows only what it
 * reads here, and an announcement only when server code published it (`from` absent: a viewer's
 * connection id is always there).
 * @returns the message, or `undefined` for data that is none of the kinds
 */
export function readLiveMessage(data: unknown, from: string | undefined): LiveMessage | undefined {
  if (data === null || typeof data !== "object") return undefined;
  const value = data as Record<string, unknown>;
  const text = typeof value.text === "string" ? value.text.trim().slice(0, MAX_TEXT) : "";
  const name = typeof value.name === "string" ? value.name.trim().slice(0, MAX_NAME) : "";
  if (value.kind === "say" && name && text) return { kind: "say", name, text };
  if (value.kind === "react" && name && REACTIONS.includes(value.emoji as Reaction)) return { kind: "react", name, emoji: value.emoji as Reaction };
  if (value.kind === "announce" && from === undefined && text) return { kind: "announce", text };
  return undefined;
}
