import type { Capability, Claims } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { DokitError } from "../lifecycle/errors";
import type { Lifecycle } from "../lifecycle/lifecycle";
import type { Presence } from "../presence/presence";
import { closeWith } from "../frames/close";
import { trySend } from "../frames/send";
import { overBytes } from "../utf8/size";
import { CLOSE_ROOM_DRAINED, ROOM_DRAINED_REASON, ROOM_EPOCH_PARAM, ROOM_MORE, ROOM_PUBLISH, ROOM_SINCE_PARAM } from "../protocol/rooms";
import type { WebSockets } from "../websockets/websockets";
import { Cursors } from "./shard-cursors";
import type { RoomsErrorCode } from "./errors";
import { ShardMembership } from "./shard-membership";
import { ShardDelivery } from "./shard-delivery";
import { ShardPresence } from "./shard-presence";
import { MESSAGE_BYTES, outgoingBytes, PRESENCE_PART_BYTES } from "./sizes";
import { CAPACITY_HEADER, DELIVER_PATH, FULL_HEADER, namespaceOf } from "./names";
import { filters, type RoomPublishOptions } from "./publish-filters";
import { Outbox, readPublish } from "./shard-outbox";
import { resetFrame, roomErrorFrame, welcomeFrame } from "./room-frames";
import type { OutgoingMessage } from "./types";

/** Options of {@link RoomShard}. */
export interface RoomShardOptions {
  /** The object's WebSockets: its connections are the shard's clients (installed with the shard). */
  webSockets: WebSockets;
  /** The object's `env`, which holds both bindings. */
  env: object;
  /** The name of the binding this shard class is bound to (the router's `shards`): the sequencer delivers through it. */
  shards: string;
  /** The name of the binding of `RoomSequencer` (default `"ROOM_SEQUENCER"`). */
  sequencer?: string;
  /** How long publishes are gathered into one batch, in ms: 0 to 1,000 (default 10). */
  batchMs?: number;
  /** How soon a change in the shard's connection count is reported room-wide, in ms: 10 to 60,000 (default 1,000). */
  countMs?: number;
  /** The largest message body, as JSON, in UTF-8 bytes: 1 to 1,048,576 (default 65,536). */
  maxMessageBytes?: number;
  /**
   * Stores each publish until the sequencer has taken it (one storage write per message), so a shard
   * reset with a batch waiting sends it when it next runs, even for clients that do not resend.
   * Default `false`: waiting publishes are held in memory, and clients resend what was not acknowledged.
   */
  storeWaiting?: boolean;
  /**
   * The Presence spread over the room's shards (a `Presence` from `dokit/presence`). Default: the
   * plug-in named `"presence"` of `webSockets` (its `presence` option), if any.
   */
  presence?: Presence;
  /** Whether a connection may publish (its tags, its state…). Default: every connection may. */
  canPublish?: (connection: Connection) => boolean;
  /**
   * @internal For tests only (a bound they cannot reach at its real size): the most estimated bytes of
   * presence entries one call to the sequencer carries, 1 to 2 MiB (default 2 MiB); a larger update goes in parts.
   */
  presencePartBytes?: number;
}

const OPEN = 1;
/** A shard's parts, built by `attach`, each owning its share of the work. */
interface Parts {
  lifecycle: Lifecycle;
  /** Where each connection stands when it is not simply live. */
  cursors: Cursors;
  /** The shard's standing in its room, its count, and its link to the sequencer. */
  membership: ShardMembership;
  /** Deliveries from the sequencer, and catch-ups. */
  delivery: ShardDelivery;
  /** Publishes on their way to the sequencer, until each publisher has its answer. */
  outbox: Outbox;
}

/** How long `drain()` waits for publishes still on their way to the sequencer. */
const DRAIN_WAIT_MS = 5000;

/**
 * Makes a Durable Object one shard of a logical room spread over many objects. Clients connect
 * (through `routeRoomRequest`) to a shard named `<room>#<index>`; what any of them publishes, and what
 * server code publishes, reaches every connection of the room on every shard, once, in one total
 * order given by the room's `RoomSequencer`. docs/rooms.md has the design and its guarantees.
 *
 * ```ts
 * readonly webSockets = new WebSockets();
 * readonly room = new RoomShard({ webSockets: this.webSockets, env: this.env, shards: "CHAT_SHARD" });
 * readonly lifecycle = Lifecycle.install(this).use(this.room);
 * ```
 */
export class RoomShard implements Capability {
  readonly capabilityName = "RoomShard";
  readonly #options: RoomShardOptions;
  readonly #batchMs: number;
  readonly #countMs: number;
  readonly #maxBytes: number;
  readonly #presencePartBytes: number;
  /** What `attach` builds. */
  #parts: Parts | undefined;
  #presence: ShardPresence | undefined;
  #loading: Promise<void> | undefined;

  /**
   * @param options - the WebSockets, env, binding names, batching and bounds
   * @throws DokitError INVALID_ARGUMENT for a bound out of range
   */
  constructor(options: RoomShardOptions) {
    this.#options = options;
    this.#batchMs = inRange("batchMs", options.batchMs ?? 10, 0, 1000);
    this.#countMs = inRange("countMs", options.countMs ?? 1000, 10, 60_000);
    this.#maxBytes = inRange("maxMessageBytes", options.maxMessageBytes ?? 65_536, 1, 1_048_576);
    this.#presencePartBytes = inRange("presencePartBytes", options.presencePartBytes ?? PRESENCE_PART_BYTES, 1, PRESENCE_PART_BYTES);
  }

  attach(claims: Claims): void {
    const lifecycle = claims.lifecycle;
    const storage = lifecycle.ctx.storage;
    const sequencer = this.#options.sequencer ?? "ROOM_SEQUENCER";
    namespaceOf(this.#options.env, this.#options.shards, "RoomShard shards");
    namespaceOf(this.#options.env, sequencer, "RoomShard sequencer");
    const sockets = this.#options.webSockets;
    const cursors = new Cursors(storage);
    const membership = new ShardMembership({
      storage,
      webSockets: sockets,
      name: lifecycle.name,
      binding: this.#options.shards,
      env: this.#options.env,
      sequencer,
      countMs: this.#countMs,
      // The order started again: the delivery side tells the clients before its first message.
      restarted: (epoch) => delivery.restarted(epoch),
    });
    const delivery = new ShardDelivery({ webSockets: sockets, cursors, membership });
    const outbox = new Outbox({ webSockets: sockets, membership, batchMs: this.#batchMs, storage: this.#options.storeWaiting ? storage : undefined });
    this.#parts = { lifecycle, cursors, membership, delivery, outbox };
    sockets.use({
      onConnect: (connection, ctx) => this.#connected(connection, ctx.request),
      onClose: (connection) => this.#closed(connection),
      // An error ends the socket as a close does.
      onError: (connection) => this.#closed(connection),
    });
    // Asked before WebSockets accepts: a shard at the capacity the router gave refuses, and the router tries the next.
    claims.upgrade((request) => this.#full(request));
    claims.use(sockets);
    // {"type":"dokit_room_publish","id":<string>,"data":<json>} from any connection.
    claims.frame(ROOM_PUBLISH, (connection, frame) => this.#publishFrame(connection, frame));
    // {"type":"dokit_room_more","token"}: the client read a catch-up up to its pause (after a wake, the catch-up has gone on already).
    claims.frame(ROOM_MORE, async (connection, frame) => {
      await this.#load();
      this.#my.delivery.more(connection, frame.token);
    });
    // POST /__dokit_room/deliver from the sequencer, with the room's key.
    claims.route(DELIVER_PATH, (request) => this.#deliverRoute(request));
    this.#linkPresence();
  }

  /** The room this shard belongs to (its object name without `#<index>`). */
  get room(): string {
    return this.#my.membership.room;
  }

  /** This shard's index in the room. */
  get index(): number {
    return this.#my.membership.index;
  }

  /**
   * @returns the room-wide connection count: as last heard from the sequencer for the other shards (see
   * docs/rooms.md for how stale), with this shard's own connections as they are now
   */
  count(): number {
    return this.#my.membership.count();
  }

  /** @returns how many publishes wait for the sequencer (gathered into a batch, or in the batch being sent) */
  waiting(): number {
    return this.#my.outbox.waiting;
  }

  /** @returns what keeps the object in memory: publishes waiting for the sequencer, one line (else none) */
  keepsAwake(): string[] {
    const waiting = this.waiting();
    return waiting ? [`rooms: ${waiting} publish(es) waiting for the room's sequencer`] : [];
  }

  /**
   * Publishes to the whole room from server code, batched with the shard's other publishes.
   * @returns the message's seq, once the sequencer has ordered it
   * @throws DokitError INVALID_ARGUMENT for a value that is not JSON or over `maxMessageBytes` (or with an except list of megabytes); rejects with ROOM_PUBLISH_FAILED when the sequencer cannot be reached
   */
  publish(data: unknown, options: RoomPublishOptions = {}): Promise<number> {
    const json = JSON.stringify(data);
    if (json === undefined) throw new DokitError<RoomsErrorCode>("INVALID_ARGUMENT", "RoomShard.publish: the data is not JSON");
    if (overBytes(json, this.#maxBytes)) {
      throw new DokitError<RoomsErrorCode>("INVALID_ARGUMENT", `RoomShard.publish: the data is over maxMessageBytes (${this.#maxBytes} bytes as JSON)`);
    }
    const message: OutgoingMessage = { id: crypto.randomUUID(), data: json, ...filters(options) };
    if (outgoingBytes(message) > MESSAGE_BYTES) throw new DokitError<RoomsErrorCode>("INVALID_ARGUMENT", "RoomShard.publish: the data and filters together are too large to deliver (keep except lists short)");
    return new Promise((resolve, reject) => {
      this.#load().then(() => this.#my.outbox.add({ message, settle: { resolve, reject } }), reject);
    });
  }

  /**
   * Drains this shard, to take it out of the room (lower the router's `shardCount` first, so the
   * shard is no longer chosen): waits for its publishes to reach the sequencer, closes every
   * connection with 3009 (clients reconnect through the router to a shard that stays, and resume
   * with `since`), leaves the room, and resets the instance 100 ms later, so real clients see their
   * close complete (a close issued outside a WebSocket event completes only then).
   * @returns how many connections were closed
   */
  async drain(): Promise<number> {
    await this.#load();
    for (let waited = 0; this.waiting() > 0 && waited < DRAIN_WAIT_MS; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    let closed = 0;
    for (const connection of [...this.#options.webSockets.getConnections()]) {
      closeWith(connection, CLOSE_ROOM_DRAINED, ROOM_DRAINED_REASON);
      closed++;
    }
    await this.#my.membership.leave();
    const ctx = this.#my.lifecycle.ctx;
    setTimeout(() => ctx.abort("dokit: room shard drained"), 100);
    return closed;
  }

  // ---------------------------------------------------------------- clients

  async #connected(connection: Connection, request: Request): Promise<void> {
    const cursors = this.#my.cursors;
    const member = this.#my.membership;
    // Out of live messages until it has its welcome (and its catch-up).
    cursors.hold(connection.id, 0, false);
    const params = new URL(request.url).searchParams;
    const raw = params.get(ROOM_SINCE_PARAM);
    let since = raw !== null && /^\d{1,15}$/.test(raw) ? Number(raw) : undefined;
    const given = params.get(ROOM_EPOCH_PARAM);
    const theirs = since !== undefined && given !== null && given.length <= 64 ? given : undefined;
    try {
      await this.#load();
      // Joins unless registered, decided after any leave under way (the last client's close may be taking the shard out).
      await member.join(false);
      // The client knows a later order than this shard (it was told on another shard): learn it first.
      if (theirs !== undefined && member.record.epoch !== undefined && theirs > member.record.epoch) await member.join(true);
    } catch (error) {
      cursors.drop(connection.id);
      throw error;
    }
    this.#presence?.joined();
    const { delivered, epoch } = member.record;
    const count = this.count();
    trySend(connection, welcomeFrame(this.room, this.index, delivered, count, epoch, connection.publicId));
    member.welcomed(count);
    if (raw !== null && since === undefined) trySend(connection, roomErrorFrame("ROOM_REJECTED", "since must be a seq: a whole number"));
    // A seq of an order the room no longer has (its sequencer lost its storage): told, then the new order from its start.
    if (theirs !== undefined && epoch !== undefined && theirs !== epoch) {
      trySend(connection, resetFrame(epoch));
      since = 0;
    }
    // Behind the shard, or ahead of it (it gave a seq of another shard, or past the head): through the
    // log, which sends what it missed and leaves at most a floor at the room's head. Else live.
    if (since !== undefined && since !== delivered) void this.#my.delivery.catchUp(connection, since);
    else cursors.release(connection.id, delivered, delivered);
    member.countChanged();
  }

  /** A connection closed or failed: it is no longer counted (its close or error event made the count stale). */
  #closed(connection: Connection): void {
    const { cursors, delivery, membership } = this.#my;
    cursors.drop(connection.id);
    delivery.closed(connection.id);
    membership.countChanged();
    if (this.#options.webSockets.count() === 0) void membership.leave().catch((error: unknown) => console.warn("dokit: a room shard failed to leave its room", error));
  }

  // -------------------------------------------------------------- publishes

  /** A client's publish: checked, then handed to the outbox, which sends the ack or the refusal. */
  async #publishFrame(connection: Connection, frame: Record<string, unknown>): Promise<void> {
    let read = readPublish(frame, this.#maxBytes);
    if (typeof read !== "string" && this.#options.canPublish && !this.#allowed(connection)) read = "This connection may not publish";
    if (typeof read === "string") return void trySend(connection, roomErrorFrame("ROOM_REJECTED", read, frame.id));
    // After the messages a reset left waiting (storeWaiting): one publisher's messages keep their order.
    await this.#load();
    // Closed after a publish failed: what it sent since is sent again on its next connection, after the failed ones.
    if (connection.readyState !== OPEN) return;
    this.#my.outbox.add({ message: { from: connection.publicId, id: read.id, data: read.data }, connection, publisher: connection.id });
  }

  /** @returns whether `canPublish` lets the connection publish (one that throws says no, and is logged) */
  #allowed(connection: Connection): boolean {
    try {
      return this.#options.canPublish?.(connection) === true;
    } catch (error) {
      console.error("dokit: RoomShard's canPublish threw; the publish is refused", error);
      return false;
    }
  }

  /** @returns the refusal of an upgrade when this shard holds the capacity the router gave, else `undefined` (accepted) */
  #full(request: Request): Response | undefined {
    const raw = request.headers.get(CAPACITY_HEADER);
    const capacity = raw === null ? NaN : Number(raw);
    if (!Number.isInteger(capacity) || capacity < 1 || this.#options.webSockets.count() < capacity) return undefined;
    return new Response("this shard of the room is full", { status: 503, headers: { [FULL_HEADER]: "1" } });
  }

  // ------------------------------------------------------------ deliveries

  async #deliverRoute(request: Request): Promise<Response> {
    await this.#load();
    return this.#my.delivery.answer(request, this.#presence);
  }

  // ------------------------------------------------------------------ inside

  /** Reads the stored record once per instance, and resumes catch-ups a reset cut short. */
  #load(): Promise<void> {
    return (this.#loading ??= (async () => {
      const { membership, outbox, cursors, delivery } = this.#my;
      await membership.load();
      await outbox.load();
      for (const [id, cursor] of await cursors.load()) {
        const connection = this.#options.webSockets.getConnection(id);
        if (!connection) cursors.drop(id);
        else if (cursor.pending) void delivery.catchUp(connection, cursor.at);
      }
    })().catch((error: unknown) => {
      this.#loading = undefined;
      throw error;
    }));
  }

  /** Links the room's Presence, if any (the `presence` option, else the WebSockets' plug-in of that name), to the room. */
  #linkPresence(): void {
    // SAFETY: the plug-in named "presence" is dokit/presence's (its pluginName); rooms may not import it at run time.
    const presence = this.#options.presence ?? (this.#options.webSockets.plugin("presence") as Presence | undefined);
    if (!presence) return;
    this.#presence ??= new ShardPresence({
      presence,
      membership: this.#my.membership,
      ready: () => this.#load(),
      countMs: this.#countMs,
      partBytes: this.#presencePartBytes,
    });
  }

  /** @returns what `attach` built @throws DokitError NOT_INSTALLED before it */
  get #my(): Parts {
    if (!this.#parts) throw new DokitError<RoomsErrorCode>("NOT_INSTALLED", "this RoomShard is not installed: Lifecycle.install(this).use(roomShard)");
    return this.#parts;
  }
}

/** @returns `value` when it is an integer from `min` to `max` @throws DokitError INVALID_ARGUMENT otherwise */
function inRange(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new DokitError<RoomsErrorCode>("INVALID_ARGUMENT", `RoomShard: ${name} must be an integer from ${min} to ${max} (got ${String(value)})`);
  }
  return value;
}
