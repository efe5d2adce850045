import type { Connection } from "../lifecycle/connection";
import { DokitError } from "../lifecycle/errors";
import { closeWith } from "../frames/close";
import { trySend } from "../frames/send";
import { overBytes } from "../utf8/size";
import { CLOSE_ROOM_PUBLISH_FAILED, ROOM_PUBLISH_FAILED_REASON } from "../protocol/rooms";
import type { WebSockets } from "../websockets/websockets";
import type { RoomsErrorCode } from "./errors";
import { ackFrame, roomErrorFrame } from "./room-frames";
import { outgoingBytes } from "./sizes";
import type { ShardMembership } from "./shard-membership";
import type { OutgoingMessage } from "./types";

/** The longest message id a client may give. */
const MAX_ID = 128;

/**
 * Reads a client's publish frame `{"type":"dokit_room_publish","id","data"}`.
 * @returns its id and body as JSON text, or why it is refused (a string)
 */
export function readPublish(frame: Record<string, unknown>, maxBytes: number): { id: string; data: string } | string {
  const id = frame.id;
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_ID) return `id must be a string of 1 to ${MAX_ID} characters`;
  const data = Object.hasOwn(frame, "data") ? JSON.stringify(frame.data) : undefined;
  if (data === undefined) return "data is missing";
  // A string of n characters is at most 3n bytes in UTF-8: most bodies need no count.
  if (overBytes(data, maxBytes)) return `data over ${maxBytes} bytes`;
  return { id, data };
}

/** A message waiting to be ordered: who to tell its seq (a client's connection, or a server caller). */
export interface Pending {
  message: OutgoingMessage;
  /** Its storage key (set by the outbox). */
  key?: string;
  /** The publishing connection: it gets the ack, or the failure. */
  connection?: Connection;
  /** Its connection id (the message's `from` is the public one), to find it again after a reset; kept with a stored message, never sent to the room. */
  publisher?: string;
  /** A server-side publish: settled with the seq, or the failure. */
  settle?: { resolve(seq: number): void; reject(error: unknown): void };
}

/** What the outbox needs of its shard. */
export interface OutboxDeps {
  /** The shard's link to the sequencer: batches go through it. */
  membership: ShardMembership;
  /** The shard's connections: where a publisher that a reset left waiting is found, by id. */
  webSockets: WebSockets;
  /** How long publishes are gathered before a batch goes, in ms. */
  batchMs: number;
  /** Where waiting messages are kept until the sequencer has taken them (`undefined`: in memory only). */
  storage: DurableObjectStorage | undefined;
}

const PREFIX = "__dokit_room_out:";
const OPEN = 1;

/** The most messages one batch carries, and the most bytes of them by {@link outgoingBytes} (a message alone always goes). */
const MAX_BATCH = 256;
const MAX_BATCH_BYTES = 2 * 1024 * 1024;
/** The waits before each retry of a batch the sequencer did not answer (4 tries in about 2.6 s). */
const RETRY_MS = [100, 500, 2000];

/**
 * A shard's publishes on their way to the sequencer, until each publisher has its answer (an ack
 * frame or a settled promise): gathered for `batchMs`, sent as one batch,
 * ONE batch in flight at a time (so one publisher's messages are ordered as sent), retried with the
 * same messages when a call fails (the sequencer deduplicates them by publisher, id and content). A batch that
 * fails every retry fails its publishers' waiting messages with it, so a publisher that sends them
 * again, in order, never has a later message ordered before an earlier one.
 * Waiting messages are held in memory: a client resends, in order, what was not acknowledged when it
 * reconnects. With `storage`, each is also stored until the sequencer has taken it, so a shard reset
 * with messages waiting sends them first, in order, when it next runs (`load`), at one storage
 * write per message.
 */
export class Outbox {
  readonly #deps: OutboxDeps;
  readonly #queue: Pending[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #sending = false;
  /** Messages in the batch being sent. */
  #inFlight = 0;
  /** The number of the next stored message (its key sorts after every stored one). */
  #next = 0;

  constructor(deps: OutboxDeps) {
    this.#deps = deps;
  }

  /** @returns how many messages wait (not yet acknowledged) */
  get waiting(): number {
    return this.#queue.length + this.#inFlight;
  }

  /**
   * Reads the messages a reset left waiting, ahead of any new one (call once, before the first add):
   * their publishers are found by connection id when the sequencer answers.
   */
  async load(): Promise<void> {
    if (!this.#deps.storage) return;
    const stored = await this.#deps.storage.list<OutgoingMessage & { by?: string }>({ prefix: PREFIX });
    const found: Pending[] = [];
    for (const [key, { by, ...message }] of stored) found.push({ key, message, publisher: by });
    const last = found.at(-1)?.key;
    this.#next = last === undefined ? 0 : Number(last.slice(PREFIX.length)) + 1;
    this.#queue.unshift(...found);
    this.#schedule();
  }

  /** Keeps a message (when stored, not awaited: the output gate holds its ack until the write is durable) and schedules its batch. */
  add(pending: Pending): void {
    if (this.#deps.storage) {
      pending.key = PREFIX + String(this.#next++).padStart(15, "0");
      void this.#deps.storage.put(pending.key, pending.publisher === undefined ? pending.message : { ...pending.message, by: pending.publisher });
    }
    this.#queue.push(pending);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#timer || this.#sending || !this.#queue.length) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#flush();
    }, this.#deps.batchMs);
  }

  async #flush(): Promise<void> {
    this.#sending = true;
    const batch = this.#take();
    this.#inFlight = batch.length;
    try {
      const messages = batch.map((pending) => pending.message);
      for (let attempt = 0; ; attempt++) {
        try {
          const published = await this.#deps.membership.publish(messages);
          this.#forget(batch);
          batch.forEach((pending, i) => this.#acknowledge(pending, published.seqs[i] as number));
          break;
        } catch (error) {
          const wait = RETRY_MS[attempt];
          if (wait === undefined) {
            // Its publishers' later messages fail with it: none may be ordered before the one that failed.
            const failed = [...batch, ...this.#behind(batch)];
            this.#forget(failed);
            this.#fail(failed, error);
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, wait));
        }
      }
    } finally {
      this.#sending = false;
      this.#inFlight = 0;
      this.#schedule();
    }
  }

  #acknowledge(pending: Pending, seq: number): void {
    const connection = this.#publisherOf(pending);
    if (connection) trySend(connection, ackFrame(pending.message.id, seq));
    pending.settle?.resolve(seq);
  }

  /**
   * Publishes the sequencer did not take (a batch after every retry, and its publishers' messages
   * waiting behind it): each is refused, and each publishing connection is then closed (3010), so
   * that it sends them again, in order, on its next connection before anything new; a message it
   * sends meanwhile is not taken, and can never be ordered before the ones that failed.
   */
  #fail(failed: readonly Pending[], error: unknown): void {
    console.error("dokit: a room shard could not publish to its room's sequencer", error);
    const publishers = new Set<Connection>();
    for (const pending of failed) {
      const connection = this.#publisherOf(pending);
      if (connection) {
        trySend(connection, roomErrorFrame("ROOM_PUBLISH_FAILED", "The room did not take the message; send it again", pending.message.id));
        publishers.add(connection);
      }
      pending.settle?.reject(new DokitError<RoomsErrorCode>("ROOM_PUBLISH_FAILED", "the room's sequencer did not take the message", { cause: error }));
    }
    for (const connection of publishers) closeWith(connection, CLOSE_ROOM_PUBLISH_FAILED, ROOM_PUBLISH_FAILED_REASON);
  }

  /** @returns the open connection that published a message (found by id for one a reset left waiting), if any */
  #publisherOf(pending: Pending): Connection | undefined {
    if (pending.connection) return pending.connection.readyState === OPEN ? pending.connection : undefined;
    return pending.publisher === undefined ? undefined : this.#deps.webSockets.getConnection(pending.publisher);
  }

  #forget(batch: readonly Pending[]): void {
    if (this.#deps.storage) void this.#deps.storage.delete(batch.flatMap((pending) => (pending.key === undefined ? [] : [pending.key])));
  }

  /** Takes out of the queue the messages of the publishers of `batch` (a connection's, or the shard's own server code's). */
  #behind(batch: readonly Pending[]): Pending[] {
    const publishers = new Set(batch.map((pending) => pending.message.from));
    const taken: Pending[] = [];
    for (let i = 0; i < this.#queue.length; ) {
      const pending = this.#queue[i] as Pending;
      if (publishers.has(pending.message.from)) taken.push(...this.#queue.splice(i, 1));
      else i++;
    }
    return taken;
  }

  /** @returns the next batch, cut at MAX_BATCH messages or MAX_BATCH_BYTES (always at least one) */
  #take(): Pending[] {
    let bytes = 0;
    let count = 0;
    for (const pending of this.#queue) {
      bytes += outgoingBytes(pending.message);
      if (count > 0 && (count >= MAX_BATCH || bytes > MAX_BATCH_BYTES)) break;
      count++;
    }
    return this.#queue.splice(0, count);
  }
}
