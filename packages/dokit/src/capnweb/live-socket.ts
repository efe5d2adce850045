// The socket behind a Cap'n Web connection. WebSockets treats a Connection
// as a WebSocket with an attachment; this object is that shape in memory:
// `send` delivers a frame through the client's `message(frame)`, `close`
// ends the session, and the attachment (dokit's flags and the user's state)
// is kept in a field instead of the hibernation store.

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

/** What a {@link LiveSocket} does with frames and closes: the session behind it. */
export interface LiveSocketSink {
  /** Delivers one server frame to the client. */
  deliver(frame: string | ArrayBuffer | ArrayBufferView): void;
  /** Ends the session with a close code and reason. */
  close(code: number, reason: string): void;
}

/** A WebSocket-shaped object for a connection that lives only in memory (no hibernation). */
export class LiveSocket extends EventTarget {
  readonly CONNECTING = CONNECTING;
  readonly OPEN = OPEN;
  readonly CLOSING = CLOSING;
  readonly CLOSED = CLOSED;
  readonly url: string | null;
  readonly protocol = "";
  readonly extensions = "";
  binaryType: "arraybuffer" | "blob" = "arraybuffer";
  readyState: number = OPEN;
  readonly #sink: LiveSocketSink;
  #attachment: unknown = null;

  /**
   * @param url - the upgrade request's URL
   * @param sink - the session that carries frames and closes
   */
  constructor(url: string, sink: LiveSocketSink) {
    super();
    this.url = url;
    this.#sink = sink;
  }

  /** Already accepted: a no-op. */
  accept(): void {}

  /** Sends a frame to the client. @throws TypeError after close, like a WebSocket */
  send(message: string | ArrayBuffer | ArrayBufferView): void {
    if (this.readyState !== OPEN) throw new TypeError("WebSocket send() after close");
    this.#sink.deliver(message);
  }

  /** Ends the session (the client sees this code and reason). */
  close(code = 1000, reason = ""): void {
    if (this.readyState >= CLOSING) return;
    this.readyState = CLOSING;
    this.#sink.close(code, reason);
  }

  /** Stores a copy of `value` (structured clone, like the platform). */
  serializeAttachment(value: unknown): void {
    this.#attachment = structuredClone(value);
  }

  /** @returns a copy of the stored value */
  deserializeAttachment(): unknown {
    return structuredClone(this.#attachment);
  }
}
