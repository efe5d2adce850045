// The frames a shard sends its clients, built as text once per message (the body is JSON text already).

import type { Connection } from "../lifecycle/connection";
import { DOKIT_ERROR } from "../protocol/dokit-error";
import { ROOM, ROOM_ACK, ROOM_COUNT, ROOM_GAP, ROOM_MORE, ROOM_RESET, ROOM_WELCOME } from "../protocol/rooms";
import type { RoomMessage } from "./types";

/** @returns `{"type":"dokit_room","seq","from"?,"data"}` */
export function messageFrame(message: RoomMessage): string {
  const from = message.from === undefined ? "" : `,"from":${JSON.stringify(message.from)}`;
  return `{"type":"${ROOM}","seq":${message.seq}${from},"data":${message.data}}`;
}

/** @returns `{"type":"dokit_room_gap","from","to"}` */
export function gapFrame(gap: { from: number; to: number }): string {
  return `{"type":"${ROOM_GAP}","from":${gap.from},"to":${gap.to}}`;
}

/** @returns `{"type":"dokit_room_ack","id","seq"}` */
export function ackFrame(id: string, seq: number): string {
  return `{"type":"${ROOM_ACK}","id":${JSON.stringify(id)},"seq":${seq}}`;
}

/** @returns `{"type":"dokit_room_welcome","room","shard","seq","count","epoch","you"}` (`you`: the connection's public id, its messages' `from`) */
export function welcomeFrame(room: string, shard: number, seq: number, count: number, epoch: string | undefined, you: string): string {
  return JSON.stringify({ type: ROOM_WELCOME, room, shard, seq, count, epoch, you });
}

/** @returns `{"type":"dokit_room_reset","epoch","seq":0}`: the room's order started again */
export function resetFrame(epoch: string): string {
  return `{"type":"${ROOM_RESET}","epoch":${JSON.stringify(epoch)},"seq":0}`;
}

/** @returns `{"type":"dokit_room_more","token"}`: a catch-up waits for the client to send it back */
export function moreFrame(token: string): string {
  return `{"type":"${ROOM_MORE}","token":${JSON.stringify(token)}}`;
}

/** @returns `{"type":"dokit_room_count","count"}` */
export function countFrame(count: number): string {
  return `{"type":"${ROOM_COUNT}","count":${count}}`;
}

/** @returns a `dokit_error` frame with a rooms code (and the publish's id, when there is one) */
export function roomErrorFrame(code: "ROOM_REJECTED" | "ROOM_PUBLISH_FAILED", error: string, id?: unknown): string {
  return JSON.stringify({ type: DOKIT_ERROR, code, error, ...(typeof id === "string" && { id }) });
}

/** @returns whether `message` is for `connection` (its room-wide `tag` and `except` filters) */
export function reaches(message: RoomMessage, connection: Connection): boolean {
  // The first entry of `tags` is the connection's id, which is no tag.
  if (message.tag !== undefined && connection.tags.indexOf(message.tag, 1) < 1) return false;
  return !message.except?.includes(connection.id);
}
