import type { Connection } from "../lifecycle/connection";
import { trySend } from "../frames/send";
import type { WebSockets } from "../websockets/websockets";
import type { Cursors } from "./shard-cursors";
import type { ShardMembership } from "./shard-membership";
import type { ShardPresence } from "./shard-presence";
import { gapFrame, messageFrame, moreFrame, reaches, resetFrame } from "./room-frames";
import { KEY_HEADER } from "./names";
import type { Delivered, Delivery, RoomMessage } from "./types";

/** What the delivery side of a shard reads and updates. */
export interface ShardDeliveryDeps {
  webSockets: WebSockets;
  cursors: Cursors;
  /** The shard's record, and its link to the sequencer (whose log fills what the shard missed). */
  membership: ShardMembership;
}

const OPEN = 1;
/** The characters of frames a catch-up sends before it waits for the client to show it read them (1 MiB). */
export const CATCH_UP_WINDOW = 1_048_576;

/** Sends a frame. @returns its length, counted against the catch-up's window */
function send(connection: Connection, frame: string): number {
  trySend(connection, frame);
  return frame.length;
}

/**
 * How room messages reach a shard's clients: the sequencer's deliveries (each message once, in seq
 * order, what the shard missed pulled from the log first) and a resuming client's catch-up.
 */
export class ShardDelivery {
  readonly #deps: ShardDeliveryDeps;
  /** Deliveries, one at a time. */
  #delivering: Promise<unknown> = Promise.resolve();
  /** Catch-ups waiting for their client to send back a token, by connection id (one per connection). */
  readonly #paused = new Map<string, { token: string; connection: Connection; resume(read: boolean): void }>();

  constructor(deps: ShardDeliveryDeps) {
    this.#deps = deps;
  }

  /**
   * Sends a resuming connection what it missed after `since`, from the sequencer's log, then makes it
   * live. Live messages skip it meanwhile; it loops until it has passed what the shard delivered.
   * Paced by what the client has read: after {@link CATCH_UP_WINDOW} characters of frames it sends a
   * `dokit_room_more` token and goes on only once the client sends it back (a client reads its frames
   * in order, so the token shows it read all before it). A client that never reads holds at most one
   * window and one message. The client says what it read, which works on every runtime (a socket's
   * `bufferedAmount` exists only from workerd 1.20261117 on, and counts what the network took, not
   * what the client read).
   */
  async catchUp(connection: Connection, since: number): Promise<void> {
    const cursors = this.#deps.cursors;
    const membership = this.#deps.membership;
    // The order the catch-up counts in: when the room's order starts again meanwhile, the restart made the connection live.
    const epoch = membership.record.epoch;
    let at = since;
    let unread = 0;
    cursors.hold(connection.id, at, true);
    for (let failures = 0; connection.readyState === OPEN; ) {
      let range;
      try {
        range = await this.#deps.membership.sequencer().since(at);
      } catch (error) {
        console.warn(`dokit: a room shard failed to fetch missed messages for ${connection.id}; retrying`, error);
        await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** failures++, 5000)));
        if (membership.record.epoch !== epoch) return;
        continue;
      }
      if (membership.record.epoch !== epoch) return;
      if (connection.readyState !== OPEN) break;
      if (range.gap) unread += send(connection, gapFrame(range.gap));
      for (const message of range.messages) {
        if (unread >= CATCH_UP_WINDOW) {
          // Stored first: a shard woken meanwhile goes on from here.
          cursors.hold(connection.id, at, true);
          if (!(await this.#read(connection)) || membership.record.epoch !== epoch) return;
          unread = 0;
        }
        if (reaches(message, connection)) unread += send(connection, messageFrame(message));
        at = message.seq;
      }
      at = range.last;
      const delivered = membership.record.delivered;
      if (!range.more && delivered <= at) return cursors.release(connection.id, at, delivered);
      cursors.hold(connection.id, at, true);
    }
    cursors.drop(connection.id);
  }

  /**
   * The room's order started again: every connection that has joined is told, and is live from the
   * new order's start (the shard now stands at 0 in it, so deliveries bring it everything).
   */
  restarted(epoch: string): void {
    const cursors = this.#deps.cursors;
    const frame = resetFrame(epoch);
    for (const connection of this.#deps.webSockets.getConnections()) {
      if (cursors.joining(connection.id)) continue;
      cursors.drop(connection.id);
      trySend(connection, frame);
    }
  }

  /** A client sent back a catch-up's token (`dokit_room_more`): its catch-up goes on. */
  more(connection: Connection, token: unknown): void {
    const waiting = this.#paused.get(connection.id);
    if (!waiting || waiting.token !== token) return;
    this.#paused.delete(connection.id);
    waiting.resume(true);
  }

  /** A connection closed: its paused catch-up ends (not that of an open connection that took its id meanwhile). */
  closed(id: string): void {
    const waiting = this.#paused.get(id);
    if (!waiting || waiting.connection.readyState === OPEN) return;
    this.#paused.delete(id);
    waiting.resume(false);
  }

  /** Asks the client to show it read what was sent. @returns whether it did (`false`: it closed first) */
  #read(connection: Connection): Promise<boolean> {
    const token = crypto.randomUUID();
    // One paused catch-up per connection id: one left by a connection that had the id before ends.
    this.#paused.get(connection.id)?.resume(false);
    return new Promise((resume) => {
      this.#paused.set(connection.id, { token, connection, resume });
      if (!trySend(connection, moreFrame(token))) {
        this.#paused.delete(connection.id);
        resume(false);
      }
    });
  }

  /**
   * Answers a delivery from the sequencer: `POST /__dokit_room/deliver` with the room's key (anything
   * else, or a shard that is no member, gets 410 and is unregistered by the sequencer).
   */
  async answer(request: Request, presence?: ShardPresence): Promise<Response> {
    // A join or leave in flight decides whether this shard is a member.
    await this.#deps.membership.settled();
    const record = this.#deps.membership.record;
    if (request.method !== "POST" || !record.registered || request.headers.get(KEY_HEADER) !== record.key) {
      return new Response("not a member of the room", { status: 410 });
    }
    // SAFETY: only the sequencer knows the key, and it sends a Delivery.
    const delivery = (await request.json()) as Delivery;
    this.#deps.membership.heard(delivery.count);
    presence?.news(delivery.presence);
    const next = this.#delivering.then(() => this.take(delivery));
    this.#delivering = next.catch(() => {});
    await next;
    const answer: Delivered = { delivered: this.#deps.membership.record.delivered, connections: this.#deps.webSockets.count() };
    this.#deps.membership.told(answer.connections);
    return Response.json(answer);
  }

  /** Sends a delivery's new messages, after pulling the ones before it that this shard missed. */
  async take(delivery: Delivery): Promise<void> {
    const first = delivery.messages[0]?.seq ?? delivery.head + 1;
    const record = () => this.#deps.membership.record;
    while (record().delivered < Math.min(first - 1, delivery.head)) {
      const before = record().delivered;
      const range = await this.#deps.membership.sequencer().since(before);
      this.#send(range.messages, range.last, range.gap);
      if (record().delivered <= before) throw new Error("the sequencer's log did not move this shard on");
    }
    const fresh = delivery.messages.filter((message) => message.seq > record().delivered);
    if (fresh.length) this.#send(fresh, (fresh.at(-1) as RoomMessage).seq);
  }

  /** Sends messages (and a gap) to every live connection they reach, and stores how far the shard is. */
  #send(messages: readonly RoomMessage[], last: number, gap?: { from: number; to: number }): void {
    if (last <= this.#deps.membership.record.delivered) return;
    this.#deps.membership.delivered(last);
    const cursors = this.#deps.cursors;
    const sockets = this.#deps.webSockets;
    if (cursors.empty) {
      // Every connection is live: broadcasts, which send each socket the frame without making it a
      // Connection (no attachment decoded per socket per delivery); `tag` and `except` as room-wide filters.
      if (gap) sockets.broadcast(gapFrame(gap));
      for (const message of messages) sockets.broadcast(messageFrame(message), { ...(message.except && { except: message.except }), ...(message.tag !== undefined && { tag: message.tag }) });
      return;
    }
    const connections = [...sockets.getConnections()];
    if (gap) {
      const frame = gapFrame(gap);
      for (const connection of connections) if (cursors.wants(connection.id, gap.to)) trySend(connection, frame);
    }
    for (const message of messages) {
      const frame = messageFrame(message);
      for (const connection of connections) {
        if (cursors.wants(connection.id, message.seq) && reaches(message, connection)) trySend(connection, frame);
      }
    }
    cursors.passed(last);
  }
}
