// dokit's own frames (not the Agents protocol's) for one logical room spread over many objects
// (dokit/rooms, docs/rooms.md), and the closes of a room's connections. Every room message
// carries the room-wide sequence number `seq`. Shared by server and client; holds no behaviour.

/**
 * A shard of a room drained (`RoomShard.drain()`). In 3000–3999, so every client reconnects by
 * itself, through the room's router, to a shard that stays; a rooms client resumes with `since`.
 */
export const CLOSE_ROOM_DRAINED = 3009;
export const ROOM_DRAINED_REASON = "dokit: room shard drained; reconnect";
/**
 * A room publisher whose publish the room's sequencer did not take after every retry (each such
 * publish got a `ROOM_PUBLISH_FAILED` error frame first). In 3000–3999, so the client reconnects and
 * sends its unacknowledged publishes again, in order, before anything new: none is ordered out of turn.
 */
export const CLOSE_ROOM_PUBLISH_FAILED = 3010;
export const ROOM_PUBLISH_FAILED_REASON = "dokit: the room did not take a publish; reconnect and send again";


/** A client publishes to the room: `{"type":"dokit_room_publish","id":<its message id>,"data":<json>}`. */
export const ROOM_PUBLISH = "dokit_room_publish";
/** The room took a client's message: `{"type":"dokit_room_ack","id":<message id>,"seq":<n>}`. */
export const ROOM_ACK = "dokit_room_ack";
/** One room message: `{"type":"dokit_room","seq":<n>,"from"?:<publisher connection id>,"data":<json>}`. */
export const ROOM = "dokit_room";
/** Messages `from`..`to` (seqs, inclusive) are no longer in the room's log: the client will never receive them. */
export const ROOM_GAP = "dokit_room_gap";
/** Sent when a connection joins: `{"type":"dokit_room_welcome","room","shard","seq","count","epoch"}`. */
export const ROOM_WELCOME = "dokit_room_welcome";
/** The room-wide connection count changed (at most one frame per shard `countMs`). */
export const ROOM_COUNT = "dokit_room_count";
/**
 * The room's order started again (its sequencer lost its storage): `{"type":"dokit_room_reset","epoch","seq":0}`.
 * What the old order had after the client's last seq is lost; the new order's messages follow, from seq 1.
 */
export const ROOM_RESET = "dokit_room_reset";
/**
 * A catch-up paused until the client shows it read what was sent: `{"type":"dokit_room_more","token"}`
 * from the shard; the client sends the same frame back, with the token, for the rest.
 */
export const ROOM_MORE = "dokit_room_more";
/** Query parameter: the last seq a reconnecting client received (it gets everything after it). */
export const ROOM_SINCE_PARAM = "since";
/** Query parameter: the shard index a reconnecting client was on (the router keeps it there). */
export const ROOM_SHARD_PARAM = "shard";
/** Query parameter: the epoch of the order `since` counts in (the welcome's `epoch`). */
export const ROOM_EPOCH_PARAM = "epoch";

/** A client's publish. */
export type RoomPublishFrame = { type: "dokit_room_publish"; id: string; data: unknown };
/** The answer to a publish: the message's place in the room's order. */
export type RoomAckFrame = { type: "dokit_room_ack"; id: string; seq: number };
/** A room message (`from` is absent for messages published by server code). */
export type RoomMessageFrame = { type: "dokit_room"; seq: number; from?: string; data: unknown };
/** Messages the client missed and will never receive (older than the room's log). */
export type RoomGapFrame = { type: "dokit_room_gap"; from: number; to: number };
/**
 * A joined connection: its room, its shard index (`?shard=` on a reconnect), the seq it starts after, the
 * room-wide count, and the epoch of the room's order (sent back as `?epoch=` with `?since=`).
 */
export type RoomWelcomeFrame = { type: "dokit_room_welcome"; room: string; shard: number; seq: number; count: number; epoch: string };
/** The room's order started again at `epoch`: the client's seq is now `seq` (0), and the new order follows. */
export type RoomResetFrame = { type: "dokit_room_reset"; epoch: string; seq: number };
/** A paused catch-up (server → client), and the client's answer that it read up to it (client → server, the same token). */
export type RoomMoreFrame = { type: "dokit_room_more"; token: string };
/** `{"type":"dokit_room_count","count"}`: the room-wide connection count, when it changed. */
export type RoomCountFrame = { type: "dokit_room_count"; count: number };
/** A refused publish or resume (`ROOM_REJECTED`), or a publish the room could not take (`ROOM_PUBLISH_FAILED`). */
export type RoomErrorFrame = { type: "dokit_error"; code: "ROOM_REJECTED" | "ROOM_PUBLISH_FAILED"; error: string; id?: string };
