// A room client for the tests (what the dokit client will do): it reads every frame, publishes with
// ids and resends what was not acknowledged (the room deduplicates), and reconnects with its last seq.
// `checkDelivery` is the checker every test runs on what the clients received.
import { exports } from "cloudflare:workers";
import { CLOSE_ROOM_PUBLISH_FAILED } from "../../src/protocol/rooms";
import { openSocket, type TestSocket } from "../../src/testing";
import { publicIdOf } from "../public-id";
import { until } from "../helpers";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: { fetch(input: Request | string, init?: RequestInit): Promise<Response> } }).default;

/** A room message as a client received it. */
export type Received = { seq: number; from?: string; data: { by: string; n: number } };
export type Frame = Record<string, unknown> & { type: string };

/** One client of a room. */
/** The connection id of every RoomClient made, by its public id (what presence frames and `from` carry). */
export const byPublicId = new Map<string, string>();

export class RoomClient {
  readonly id: string;
  /** Its connection's public id: the `from` of its messages, its presence entries' key. */
  readonly publicId: string;
  /** Every JSON frame received, in order, across reconnects. */
  readonly frames: Frame[] = [];
  /** The plain text replies received. */
  readonly texts: string[] = [];
  /** Messages published and not yet acknowledged, by id. */
  readonly unacked = new Map<string, unknown>();
  /** Acknowledged ids and their seqs. */
  readonly acks = new Map<string, number>();
  socket: TestSocket | undefined;
  shard = -1;
  /** Whether it sends back a paused catch-up's token at once (as the dokit client does). */
  answerPauses = true;
  /** How many times the room closed this client because a publish failed (it reconnects each time). */
  publishFailedCloses = 0;
  #closing = false;
  #resender: ReturnType<typeof setInterval> | undefined;

  constructor(id: string, readonly room: string, readonly query: Record<string, string> = {}) {
    this.id = id;
    this.publicId = publicIdOf(id);
    byPublicId.set(this.publicId, id);
  }

  /** The room messages received, in order. */
  get messages(): Received[] {
    return this.frames.filter((frame) => frame.type === "dokit_room") as unknown as Received[];
  }

  /** The last seq received (or the welcome's, before any message). */
  get lastSeq(): number {
    let last = 0;
    for (const frame of this.frames) {
      if (frame.type === "dokit_room") last = frame.seq as number;
      else if (frame.type === "dokit_welcome" || frame.type === "dokit_room_welcome") last = Math.max(last, frame.seq as number);
      else if (frame.type === "dokit_room_gap") last = Math.max(last, frame.to as number);
    }
    return last;
  }

  /**
   * Connects (again), on `shard` when given, resuming after `since` when given; waits for the welcome,
   * then resends, in order, what was not acknowledged (unless `resend` is false).
   */
  async connect(options: { shard?: number; since?: number; resend?: boolean } = {}): Promise<Frame> {
    const query: Record<string, string> = { _pk: this.id, ...this.query };
    if (options.shard !== undefined) query.shard = String(options.shard);
    if (options.since !== undefined) query.since = String(options.since);
    const socket = await openSocket(worker, `http://example.com/room/${this.room}`, { query });
    this.socket = socket;
    // For the checker: where this connection's messages start (after `since`, else after the welcome's seq).
    this.frames.push({ type: "test_connect", since: options.since });
    const welcomes = this.frames.filter((frame) => frame.type === "dokit_room_welcome").length;
    socket.ws.addEventListener("message", (event) => {
      const text = String(event.data);
      if (!text.startsWith("{")) return void this.texts.push(text);
      const frame = JSON.parse(text) as Frame;
      // A paused catch-up: read this far, send the rest (as the dokit client does).
      if (frame.type === "dokit_room_more" && this.answerPauses) socket.send({ type: "dokit_room_more", token: frame.token });
      if (frame.type === "dokit_room_ack") {
        this.unacked.delete(frame.id as string);
        this.acks.set(frame.id as string, frame.seq as number);
      }
      if (frame.type !== "cf_agent_identity") this.frames.push(frame);
    });
    // Closed because a publish failed: back at once, on the same shard, resuming, resending in order (as the dokit client does).
    void socket.closed.then(({ code }) => {
      if (code === CLOSE_ROOM_PUBLISH_FAILED && this.socket === socket && !this.#closing) {
        this.publishFailedCloses++;
        void this.connect({ shard: this.shard, since: this.lastSeq });
      }
    });
    await until(() => this.frames.filter((frame) => frame.type === "dokit_room_welcome").length > welcomes, `${this.id}'s welcome`, 10_000);
    const welcome = this.frames.filter((frame) => frame.type === "dokit_room_welcome").at(-1) as Frame;
    this.shard = welcome.shard as number;
    if (options.resend !== false) for (const [id, data] of this.unacked) socket.send({ type: "dokit_room_publish", id, data });
    return welcome;
  }

  /** Publishes `{ by: id, n }` with id `<id>-<n>`; resent until acknowledged (see resendEvery). */
  publish(n: number): void {
    const id = `${this.id}-${n}`;
    const data = { by: this.id, n };
    this.unacked.set(id, data);
    try {
      this.socket?.send({ type: "dokit_room_publish", id, data });
    } catch {
      // Closed under it (an eviction, a 3010): kept in `unacked`, so the next connection or resend sends it.
    }
  }

  /** Resends every unacknowledged message every `ms` (what a client does after a silence or a reconnect). */
  resendEvery(ms: number): void {
    this.#resender = setInterval(() => {
      for (const [id, data] of this.unacked) {
        try {
          this.socket?.send({ type: "dokit_room_publish", id, data });
        } catch {
          // Closed: the next reconnect resends.
        }
      }
    }, ms);
  }

  send(text: string): void {
    this.socket?.send(text);
  }

  async close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#resender);
    await this.socket?.close();
  }
}

/** Opens `count` clients of `room`, client i on shard i % shards. */
export async function openClients(room: string, shards: number, count: number, prefix = "c", query: Record<string, string> = {}): Promise<RoomClient[]> {
  const clients: RoomClient[] = [];
  for (let i = 0; i < count; i++) {
    const client = new RoomClient(`${prefix}${i}`, room, { shards: String(shards), ...query });
    await client.connect({ shard: i % shards });
    clients.push(client);
  }
  return clients;
}

/**
 * The checker: every client received every message exactly once, in seq order, with no gap it was
 * not told of, every seq stands for the same message on every client (one total order), and each
 * publisher's messages arrive in the order it sent them.
 * @param expected - the ids (`<by>-<n>`) every client must have received, each once
 * @returns the seq → id order the clients agree on
 */
export function checkDelivery(clients: readonly RoomClient[], expected: ReadonlySet<string>): Map<number, string> {
  const order = new Map<number, string>();
  for (const client of clients) {
    let last: number | undefined;
    let since: number | undefined;
    const seen = new Set<string>();
    const perPublisher = new Map<string, number>();
    for (const frame of client.frames) {
      if (frame.type === "test_connect") {
        since = frame.since as number | undefined;
        continue;
      }
      if (frame.type === "dokit_room_welcome") {
        // Resumed: it continues after `since`; else it starts after the seq it joined at.
        if (since !== undefined) last = since;
        else if (last === undefined || last < (frame.seq as number)) last = frame.seq as number;
        continue;
      }
      if (frame.type === "dokit_room_gap") {
        if (last !== undefined && (frame.from as number) !== last + 1) throw new Error(`${client.id}: gap frame from ${String(frame.from)} after seq ${last}`);
        last = frame.to as number;
        continue;
      }
      if (frame.type !== "dokit_room") continue;
      const { seq, data } = frame as unknown as Received;
      if (last !== undefined && seq !== last + 1) throw new Error(`${client.id}: seq ${seq} after ${last} (an untold gap or a duplicate)`);
      last = seq;
      const id = `${data.by}-${data.n}`;
      if (seen.has(id)) throw new Error(`${client.id}: ${id} twice`);
      seen.add(id);
      const known = order.get(seq);
      if (known !== undefined && known !== id) throw new Error(`${client.id}: seq ${seq} is ${id} here and ${known} elsewhere`);
      order.set(seq, id);
      const previous = perPublisher.get(data.by) ?? -Infinity;
      if (data.n <= previous) throw new Error(`${client.id}: ${id} after ${data.by}-${previous}`);
      perPublisher.set(data.by, data.n);
    }
    const missing = [...expected].filter((id) => !seen.has(id));
    if (missing.length) throw new Error(`${client.id} never received ${missing.length} message(s): ${missing.slice(0, 5).join(", ")}…`);
  }
  return order;
}
