// The y-protocols wire, byte for byte: every message is a varUint type, then its body.
// Integers are lib0's unsigned LEB128 varints; byte arrays and strings carry a varUint
// length first. Written here (a few lines) so dokit/yjs needs neither lib0 nor
// y-protocols at runtime: y-protocols' Awareness keeps a 3 s interval timer that would
// keep a Durable Object from hibernating, and its sync reader applies an update before
// the caller could store it.

/** Message types (y-websocket, y-partyserver). */
export const MESSAGE_SYNC = 0;
export const MESSAGE_AWARENESS = 1;
export const MESSAGE_AUTH = 2;
export const MESSAGE_QUERY_AWARENESS = 3;
/** Sync message subtypes (y-protocols/sync). */
export const SYNC_STEP_1 = 0;
export const SYNC_STEP_2 = 1;
export const SYNC_UPDATE = 2;
/** The auth message subtype that refuses a client (y-protocols/auth). */
export const AUTH_PERMISSION_DENIED = 0;

/** Thrown for a message that ends early or carries an impossible length. */
export class MalformedMessage extends Error {
  override readonly name = "MalformedMessage";
}

/** Reads a message front to back. */
export class Reader {
  #at = 0;
  readonly #bytes: Uint8Array;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  /** @returns whether every byte was read */
  get done(): boolean {
    return this.#at >= this.#bytes.byteLength;
  }

  /** @returns the next varUint (at most 2^53 - 1) */
  uint(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (this.#at >= this.#bytes.byteLength) throw new MalformedMessage("message ends inside a number");
      // SAFETY: the index is inside the array (checked above).
      const byte = this.#bytes[this.#at++] as number;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
      if (scale > Number.MAX_SAFE_INTEGER) throw new MalformedMessage("number too large");
    }
  }

  /** @returns the next length-prefixed byte array (a view, no copy) */
  bytes(): Uint8Array {
    const length = this.uint();
    if (length > this.#bytes.byteLength - this.#at) throw new MalformedMessage("message ends inside a byte array");
    const view = this.#bytes.subarray(this.#at, this.#at + length);
    this.#at += length;
    return view;
  }

  /** @returns the next length-prefixed UTF-8 string */
  string(): string {
    const bytes = this.bytes();
    try {
      return decoder.decode(bytes);
    } catch {
      throw new MalformedMessage("a string is not UTF-8");
    }
  }
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
const encoder = new TextEncoder();

/** Builds a message: numbers and length-prefixed arrays, copied once into the result. */
export class Writer {
  readonly #parts: (number | Uint8Array)[] = [];
  #size = 0;

  /** Appends a varUint. */
  uint(value: number): this {
    let rest = value;
    while (rest > 0x7f) {
      this.#parts.push(0x80 | (rest & 0x7f));
      this.#size++;
      rest = Math.floor(rest / 128);
    }
    this.#parts.push(rest);
    this.#size++;
    return this;
  }

  /** Appends a length-prefixed byte array. */
  bytes(value: Uint8Array): this {
    this.uint(value.byteLength);
    this.#parts.push(value);
    this.#size += value.byteLength;
    return this;
  }

  /** Appends bytes as they are (no length). */
  raw(value: Uint8Array): this {
    this.#parts.push(value);
    this.#size += value.byteLength;
    return this;
  }

  /** Appends a length-prefixed UTF-8 string. */
  string(value: string): this {
    return this.bytes(encoder.encode(value));
  }

  /** @returns the message */
  finish(): Uint8Array {
    const out = new Uint8Array(this.#size);
    let at = 0;
    for (const part of this.#parts) {
      if (typeof part === "number") out[at++] = part;
      else {
        out.set(part, at);
        at += part.byteLength;
      }
    }
    return out;
  }
}

/** @returns `[0, subtype, payload]`: a sync message */
export function syncMessage(subtype: number, payload: Uint8Array): Uint8Array {
  return new Writer().uint(MESSAGE_SYNC).uint(subtype).bytes(payload).finish();
}

/** @returns `[1, update]`: an awareness message */
export function awarenessMessage(update: Uint8Array): Uint8Array {
  return new Writer().uint(MESSAGE_AWARENESS).bytes(update).finish();
}

/** @returns `[2, 0, reason]`: y-protocols/auth's "permission denied" */
export function permissionDenied(reason: string): Uint8Array {
  return new Writer().uint(MESSAGE_AUTH).uint(AUTH_PERMISSION_DENIED).string(reason).finish();
}
