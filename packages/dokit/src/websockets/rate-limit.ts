// The `rateLimit` option: a plug-in of the door (plugin.ts) that counts every inbound message
// (`drops`) and keeps each connection's bucket in its slot `rate`. It uses only the door's public
// interface (no internal of this folder), as a plug-in of your own would.
import type { ConnectionSlot } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { DokitError } from "../lifecycle/errors";
import { type Wakeable, WORKS_UNATTACHED } from "../lifecycle/wake";
import { closeWith } from "../frames/close";
import { trySend } from "../frames/send";
import { CLOSE_RATE_LIMITED, RATE_LIMITED_REASON } from "../protocol/rate-limit";
import { DOKIT_ERROR } from "../protocol/dokit-error";
import type { WebSocketsErrorCode } from "./errors";
import type { InboundLimit } from "./options";
import type { BuiltDoor } from "./plugin";

/** Options of `RateLimit`: a token bucket per connection for inbound messages. */
export interface RateLimitOptions {
  /** Messages a connection may send per second, on average. */
  messagesPerSecond?: number;
  /** Bytes a connection may send per second, on average (text counted in UTF-16 code units, binary in bytes). */
  bytesPerSecond?: number;
  /** Messages a connection may send at once (the bucket's size). Default: one second's worth, `messagesPerSecond`. */
  burst?: number;
  /** Bytes a connection may send at once; a larger single message is always dropped. Default: `bytesPerSecond`. */
  burstBytes?: number;
  /** Dropped messages in a row (none admitted between them) after which the connection is closed with 4429. Default 10. */
  closeAfter?: number;
}

/**
 * A connection's bucket: messages and bytes left, when they were counted, the drops in a row, and
 * when it was last stored in the attachment. Kept on the socket object while the object is awake.
 */
interface Bucket {
  messages: number;
  bytes: number;
  at: number;
  drops: number;
  saved: number;
}


const BUCKET = Symbol();
type WithBucket = { [BUCKET]?: Bucket };

/** A bucket as stored in the slot: `[messages, bytes, at, drops]`. */
type Stored = [number, number, number, number];

/** @returns whether a stored value is a bucket (four numbers) */
function isStored(value: unknown): value is Stored {
  return Array.isArray(value) && value.length === 4 && value.every((n) => typeof n === "number");
}

/**
 * How often an admitted message stores the bucket in the attachment at most (a dropped one always
 * does). A wake restores the bucket as last stored, so a client that causes an eviction regains at
 * most the allowance it used in the last {@link SAVE_EVERY_MS} before it (never more than `burst`).
 */
export const SAVE_EVERY_MS = 1000;

/**
 * An inbound rate limit per connection, given to `new WebSockets({ rateLimit: new RateLimit({ … }) })`
 * (a separate export, so objects without it do not carry it). A message over the limit is dropped:
 * it reaches no frame claim and no handler, and the connection is sent
 * `{"type":"dokit_error","code":"RATE_LIMITED","error":"Too many messages","retryAfterMs":…}`;
 * after `closeAfter` drops in a row the connection is closed with 4429 (docs/websockets.md,
 * "Per-connection limits").
 */
export class RateLimit implements InboundLimit {
  readonly #messagesPerMs: number;
  readonly #bytesPerMs: number;
  readonly #burst: number;
  readonly #burstBytes: number;
  readonly #closeAfter: number;
  readonly pluginName = "rateLimit";
  /** Each connection's bucket, kept across hibernation (the slot `rate`, the name it always had in the attachment). */
  #slot: ConnectionSlot<Stored> | undefined;

  /** @param options - rates, bursts and the close threshold (validated) */
  constructor(options: RateLimitOptions) {
    const { messagesPerSecond, bytesPerSecond } = options ?? {};
    if (messagesPerSecond === undefined && bytesPerSecond === undefined) invalid("messagesPerSecond or bytesPerSecond is required", undefined);
    this.#messagesPerMs = positive("messagesPerSecond", messagesPerSecond ?? Infinity) / 1000;
    this.#bytesPerMs = positive("bytesPerSecond", bytesPerSecond ?? Infinity) / 1000;
    if (options.burst !== undefined && messagesPerSecond === undefined) invalid("burst needs messagesPerSecond", options.burst);
    if (options.burstBytes !== undefined && bytesPerSecond === undefined) invalid("burstBytes needs bytesPerSecond", options.burstBytes);
    this.#burst = atLeastOne("burst", options.burst ?? messagesPerSecond ?? Infinity);
    this.#burstBytes = atLeastOne("burstBytes", options.burstBytes ?? bytesPerSecond ?? Infinity);
    const closeAfter = options.closeAfter ?? 10;
    if (!Number.isInteger(closeAfter) || closeAfter < 1) invalid("closeAfter must be a whole number of dropped messages, at least 1", closeAfter);
    this.#closeAfter = closeAfter;
  }

  /** Claims the slot of the buckets when the WebSockets is built, so `drops` counts on an object a wake has not wired. */
  built(door: BuiltDoor): void {
    // Four numbers as JSON: at most 4 × 24 characters and the brackets and commas.
    this.#slot = door.slot<Stored>("rate", { maxBytes: 128, check: isStored });
  }

  /** Installed through WebSockets' plug-in door (its `rateLimit` option): it claims nothing more than its slot. */
  plug(): void {}

  /** Counts one inbound message. @returns `true` when it is dropped (the client is told, or the connection closed) */
  drops(connection: Connection, message: string | ArrayBuffer): boolean {
    const bucket = (connection as WithBucket)[BUCKET] ?? this.#restore(connection);
    const now = Date.now();
    const elapsed = now - bucket.at;
    if (elapsed > 0) {
      bucket.messages = Math.min(this.#burst, bucket.messages + elapsed * this.#messagesPerMs);
      bucket.bytes = Math.min(this.#burstBytes, bucket.bytes + elapsed * this.#bytesPerMs);
      bucket.at = now;
    }
    const size = typeof message === "string" ? message.length : message.byteLength;
    if (bucket.messages >= 1 && bucket.bytes >= size) {
      bucket.messages -= 1;
      bucket.bytes -= size;
      bucket.drops = 0;
      if (now - bucket.saved >= SAVE_EVERY_MS) this.#save(connection, bucket);
      return false;
    }
    bucket.drops++;
    this.#save(connection, bucket);
    if (bucket.drops >= this.#closeAfter) {
      closeWith(connection, CLOSE_RATE_LIMITED, RATE_LIMITED_REASON);
      return true;
    }
    trySend(connection, `{"type":"${DOKIT_ERROR}","code":"RATE_LIMITED","error":"Too many messages","retryAfterMs":${this.#wait(bucket, size)}}`);
    return true;
  }

  /** @returns the milliseconds until a message of `size` would be admitted (`-1`: never, it is larger than `burstBytes`) */
  #wait(bucket: Bucket, size: number): number {
    if (size > this.#burstBytes) return -1;
    const messages = bucket.messages >= 1 ? 0 : (1 - bucket.messages) / this.#messagesPerMs;
    const bytes = bucket.bytes >= size ? 0 : (size - bucket.bytes) / this.#bytesPerMs;
    return Math.ceil(Math.max(messages, bytes));
  }

  /** The bucket stored in the connection's slot (after a wake), else a full one. */
  #restore(connection: Connection): Bucket {
    const stored = this.#slot?.get(connection);
    const bucket: Bucket = stored
      ? { messages: stored[0], bytes: stored[1], at: stored[2], drops: stored[3], saved: stored[2] }
      : { messages: this.#burst, bytes: this.#burstBytes, at: Date.now(), drops: 0, saved: 0 };
    (connection as WithBucket)[BUCKET] = bucket;
    return bucket;
  }

  /** Stores the bucket in the connection's slot, so it survives hibernation. */
  #save(connection: Connection, bucket: Bucket): void {
    bucket.saved = bucket.at;
    // Infinity (a rate not limited) is stored as null by JSON; a full bucket is stored as a large number instead.
    try {
      this.#slot?.set(connection, [finite(bucket.messages), finite(bucket.bytes), bucket.at, bucket.drops]);
    } catch {
      // The user's state fills the attachment: the bucket is kept in memory only until the next wake.
    }
  }
}

// Works before the WebSockets is attached (lifecycle/wake.ts): on the message path it needs only its slot, claimed when built.
(RateLimit.prototype as Wakeable)[WORKS_UNATTACHED] = true;

function finite(value: number): number {
  return Number.isFinite(value) ? value : Number.MAX_SAFE_INTEGER;
}

function positive(name: string, value: number): number {
  if (typeof value !== "number" || Number.isNaN(value) || value <= 0) invalid(`${name} must be a positive number`, value);
  return value;
}

function atLeastOne(name: string, value: number): number {
  if (typeof value !== "number" || Number.isNaN(value) || value < 1) invalid(`${name} must be a number, at least 1`, value);
  return value;
}

function invalid(message: string, value: unknown): never {
  throw new DokitError<WebSocketsErrorCode>("INVALID_ARGUMENT", `RateLimit: ${message} (got ${String(value)})`);
}
