// A member of a room spread over many objects (dokit/rooms on the server): an AgentClient whose
// every connection asks for the messages after the last one it received (`since`) on the shard it
// was on (`shard`), and that resends, in order, the publishes not yet acknowledged.
import { DOKIT_ERROR } from "../protocol/dokit-error";
import { ROOM, ROOM_ACK, ROOM_COUNT, ROOM_GAP, ROOM_MORE, ROOM_RESET, ROOM_WELCOME } from "../protocol/rooms";
import { AgentClient } from "./client";
import { AgentFrameError } from "./errors";
import type { AgentClientOptions, QueryParams } from "./types";

/** A room message as a member receives it. */
export interface RoomMessage<T = unknown> {
  /** Its place in the room's order. */
  seq: number;
  /** The publishing connection's public id (a member's `self`), never its connection id; absent for messages published by server code. */
  from?: string;
  data: T;
}

/** Options of {@link RoomMember}: where the room's router is, and what to do with what arrives. */
export interface RoomMemberOptions<T = unknown> extends Omit<AgentClientOptions, "agent" | "basePath" | "query"> {
  /** The path the Worker routes the room's connections on (`routeRoomRequest`), without a leading slash. */
  basePath: string;
  /** More query parameters, or a function evaluated before every connection attempt. */
  query?: QueryParams | (() => QueryParams | Promise<QueryParams>);
  /** The last seq received before (from a previous page), to resume after it. */
  since?: number;
  /** The epoch `since` counts in (the member's `epoch` on that page), so a room whose order started again says so. */
  epoch?: string;
  /** Runs for each message, in seq order, once. */
  onRoomMessage?: (message: RoomMessage<T>) => void;
  /** Runs when messages `from`..`to` can no longer be had (older than the room's log). */
  onGap?: (gap: { from: number; to: number }) => void;
  /**
   * Runs when the room's order started again (its sequencer lost its storage): messages of the old
   * order after the last seq received are lost; the new order's follow, from seq 1.
   */
  onReset?: (reset: { epoch: string }) => void;
  /** Runs when a connection joined: its shard and the room-wide count. */
  onJoin?: (welcome: { room: string; shard: number; seq: number; count: number }) => void;
  /** Runs when the room-wide connection count changed (`{"type":"dokit_room_count"}`, at most one per shard `countMs`). */
  onCount?: (count: number) => void;
  /**
   * Runs when the room refuses a publish (`ROOM_REJECTED`) or failed to take it (`ROOM_PUBLISH_FAILED`: the
   * room then closes the connection with 3010, and the member sends it again, in order, on the next).
   */
  onPublishError?: (error: { code: string; error: string; id?: string }) => void;
}

type Waiting = { data: unknown; resolve(seq: number): void; reject(error: Error): void };

/**
 * Joins a room through its router. Every message arrives once, in seq order, across reconnects;
 * publishes are acknowledged with their seq, and resent until they are (the room deduplicates).
 * A drained shard's close (3009) is followed like any other: the client reconnects, resumes.
 */
export class RoomMember<T = unknown> {
  /** The connection underneath (its `close()`, `reconnect()`, events). */
  readonly client: AgentClient;
  /** The last seq received (or told of by a gap), `undefined` before the first join. */
  seq: number | undefined;
  /** The shard the last connection joined. */
  shard: number | undefined;
  /** The epoch of the room's order that `seq` counts in (from the welcome). */
  epoch: string | undefined;
  /** The room-wide connection count: from the last welcome, then from each count frame. */
  count = 0;
  /** This member's public id, its messages' `from` (the welcome's `you`); `undefined` before the first join. */
  self: string | undefined;
  readonly #options: RoomMemberOptions<T>;
  /** Publishes not yet acknowledged, by id, in the order published. */
  readonly #waiting = new Map<string, Waiting>();
  #joined = false;
  #next = 0;

  constructor(options: RoomMemberOptions<T>) {
    this.#options = options;
    this.seq = options.since;
    this.epoch = options.epoch;
    const user = options.query;
    const query = async (): Promise<QueryParams> => {
      const extra = typeof user === "function" ? await user() : (user ?? {});
      const own: QueryParams = {};
      if (this.seq !== undefined) own.since = String(this.seq);
      if (this.seq !== undefined && this.epoch !== undefined) own.epoch = this.epoch;
      if (this.shard !== undefined) own.shard = String(this.shard);
      return { ...extra, ...own };
    };
    this.client = new AgentClient({ ...options, agent: "room", query });
    // void: what the app's callbacks return is not the listener's (workerd warns of a listener's return value).
    this.client.addEventListener("message", (event) => void (typeof event.data === "string" && this.#read(event.data)));
    this.client.addEventListener("close", () => void (this.#joined = false));
  }

  /**
   * Publishes to the whole room.
   * @returns the message's seq, once the room has ordered it (resent on each reconnect until then)
   */
  publish(data: T): Promise<number> {
    const id = `${this.client.id}:${this.#next++}`;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { data, resolve, reject });
      if (this.#joined) this.#send(id, data);
    });
  }

  /** Leaves the room: closes the connection; unacknowledged publishes reject. */
  close(): void {
    this.client.close();
    for (const [id, waiting] of this.#waiting) {
      this.#waiting.delete(id);
      waiting.reject(new Error("dokit: the room member closed before the room took the message"));
    }
  }

  #send(id: string, data: unknown): void {
    this.client.send(JSON.stringify({ type: "dokit_room_publish", id, data }));
  }

  #read(text: string): void {
    if (!text.startsWith('{"type":"dokit_')) return;
    let frame: Record<string, unknown>;
    try {
      frame = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    if (typeof frame !== "object" || frame === null || Array.isArray(frame)) return;
    // A room frame with a field of the wrong type is reported and ignored, never acted on (nor thrown in the socket's listener).
    const problem = roomFrameProblem(frame);
    if (problem !== undefined) {
      const error = new AgentFrameError(String(frame.type), problem);
      if (this.#options.onFrameError) this.#options.onFrameError(error);
      else console.warn(error.message);
      return;
    }
    const options = this.#options;
    switch (frame.type) {
      // {"type":"dokit_room","seq","from"?,"data"}: once, in order (a seq already had is dropped)
      case ROOM: {
        const seq = frame.seq as number;
        if (this.seq !== undefined && seq <= this.seq) return;
        this.seq = seq;
        const message: RoomMessage<T> = { seq, data: frame.data as T };
        if (typeof frame.from === "string") message.from = frame.from;
        return options.onRoomMessage?.(message);
      }
      // {"type":"dokit_room_gap","from","to"}
      case ROOM_GAP:
        this.seq = Math.max(this.seq ?? 0, frame.to as number);
        return options.onGap?.({ from: frame.from as number, to: frame.to as number });
      // {"type":"dokit_room_reset","epoch","seq":0}: the room's order started again; the new one follows
      case ROOM_RESET:
        this.seq = frame.seq as number;
        this.epoch = frame.epoch as string;
        return options.onReset?.({ epoch: this.epoch });
      // {"type":"dokit_room_welcome","room","shard","seq","count","epoch","you"}: resend what is not acknowledged, in order
      case ROOM_WELCOME: {
        this.shard = frame.shard as number;
        // A welcome without a reset: `seq` counts in its epoch (a resume from another one is answered with a reset next).
        if (this.epoch === undefined || this.seq === undefined) this.epoch = frame.epoch as string;
        this.count = frame.count as number;
        if (typeof frame.you === "string") this.self = frame.you;
        this.seq ??= frame.seq as number;
        this.#joined = true;
        for (const [id, { data }] of this.#waiting) this.#send(id, data);
        return options.onJoin?.({ room: frame.room as string, shard: this.shard, seq: frame.seq as number, count: this.count });
      }
      // {"type":"dokit_room_more","token"}: a catch-up waits for the member to show it read this far
      case ROOM_MORE:
        return void this.client.send(JSON.stringify({ type: ROOM_MORE, token: frame.token }));
      // {"type":"dokit_room_count","count"}
      case ROOM_COUNT: {
        if (typeof frame.count !== "number" || frame.count === this.count) return;
        this.count = frame.count;
        return options.onCount?.(this.count);
      }
      // {"type":"dokit_room_ack","id","seq"}
      case ROOM_ACK: {
        const waiting = this.#waiting.get(frame.id as string);
        this.#waiting.delete(frame.id as string);
        return waiting?.resolve(frame.seq as number);
      }
      // {"type":"dokit_error","code":"ROOM_…","error","id"?} (a malformed one is the AgentClient's to report)
      case DOKIT_ERROR: {
        if (typeof frame.code !== "string" || !frame.code.startsWith("ROOM_") || typeof frame.error !== "string") return;
        const id = typeof frame.id === "string" ? frame.id : undefined;
        // A refused publish is settled. One the room failed to take stays: the room closes this connection (3010)
        // right after, and what waits is sent again, in order, on the next; nothing new goes on this one meanwhile.
        if (frame.code === "ROOM_PUBLISH_FAILED") this.#joined = false;
        else if (frame.code === "ROOM_REJECTED" && id !== undefined) {
          const waiting = this.#waiting.get(id);
          this.#waiting.delete(id);
          waiting?.reject(new Error(`dokit: the room refused the message: ${String(frame.error)}`));
        }
        return options.onPublishError?.({ code: frame.code, error: String(frame.error), ...(id !== undefined && { id }) });
      }
    }
  }
}

const isSeq = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

/**
 * @returns what is wrong with a room frame (a field the member reads has the wrong type), or
 * `undefined` when it is readable (or no room frame: other frames are not the member's to check)
 */
function roomFrameProblem(frame: Record<string, unknown>): string | undefined {
  switch (frame.type) {
    case ROOM:
      if (!isSeq(frame.seq)) return "seq is not a whole number";
      if (frame.from !== undefined && typeof frame.from !== "string") return "from is not a string";
      return Object.hasOwn(frame, "data") ? undefined : "data is missing";
    case ROOM_GAP:
      if (!isSeq(frame.from)) return "from is not a whole number";
      if (!isSeq(frame.to)) return "to is not a whole number";
      return frame.from <= frame.to ? undefined : "from is after to";
    case ROOM_RESET:
      if (typeof frame.epoch !== "string") return "epoch is not a string";
      return isSeq(frame.seq) ? undefined : "seq is not a whole number";
    case ROOM_WELCOME:
      if (typeof frame.room !== "string") return "room is not a string";
      if (!isSeq(frame.shard)) return "shard is not a whole number";
      if (!isSeq(frame.seq)) return "seq is not a whole number";
      if (!isSeq(frame.count)) return "count is not a whole number";
      return frame.epoch === undefined || typeof frame.epoch === "string" ? undefined : "epoch is not a string";
    case ROOM_COUNT:
      return isSeq(frame.count) ? undefined : "count is not a whole number";
    case ROOM_MORE:
      return typeof frame.token === "string" ? undefined : "token is not a string";
    case ROOM_ACK:
      if (typeof frame.id !== "string") return "id is not a string";
      return isSeq(frame.seq) ? undefined : "seq is not a whole number";
  }
  return undefined;
}
