// Test sockets for @cloudflare/vitest-plugin tests: open a WebSocket to an
// object through a Worker or a stub, read frames in order, make calls.
import { parseObject } from "../frames/parse";

/** Something that answers an upgrade request: `exports.default`, `SELF`, or a Durable Object stub. */
export interface Upgrader {
  fetch(input: Request | string, init?: RequestInit): Promise<Response>;
}

/** Options of {@link openSocket}. */
export interface OpenOptions {
  /** Query parameters added to the URL (e.g. `{ _pk: "id", mode: "view" }`). */
  query?: Record<string, string>;
  /** Subprotocols, sent as `Sec-WebSocket-Protocol`. */
  protocols?: string[];
  /** More request headers. */
  headers?: Record<string, string>;
}

/** How a socket closed. */
export interface CloseInfo {
  code: number;
  reason: string;
}

/**
 * Opens a WebSocket through `target` and returns a {@link TestSocket}.
 * @param target - `exports.default` (through your Worker's routing) or a Durable Object stub
 * @param url - e.g. `http://example.com/agents/room/r1`
 * @throws when the upgrade is refused (with the status and body)
 */
export async function openSocket(target: Upgrader, url: string, options: OpenOptions = {}): Promise<TestSocket> {
  const full = new URL(url);
  for (const [key, value] of Object.entries(options.query ?? {})) full.searchParams.set(key, value);
  const headers: Record<string, string> = { Upgrade: "websocket", ...options.headers };
  if (options.protocols) headers["Sec-WebSocket-Protocol"] = options.protocols.join(", ");
  const response = await target.fetch(full.toString(), { headers });
  if (!response.webSocket) {
    throw new Error(`upgrade refused: ${response.status} ${await response.text()}`);
  }
  return new TestSocket(response.webSocket);
}

/** The client end of a WebSocket, with frames read in order. */
export class TestSocket {
  /** The underlying socket. */
  readonly ws: WebSocket;
  /** Resolves when the socket closes. */
  readonly closed: Promise<CloseInfo>;
  readonly #queue: (string | ArrayBuffer)[] = [];
  #wake: (() => void) | undefined;
  #closeInfo: CloseInfo | undefined;

  /** @param ws - an unaccepted client WebSocket (from `response.webSocket`) */
  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.accept();
    ws.addEventListener("message", (event) => {
      this.#queue.push(event.data as string | ArrayBuffer);
      this.#wake?.();
    });
    this.closed = new Promise((resolve) => {
      ws.addEventListener("close", (event) => {
        this.#closeInfo = { code: event.code, reason: event.reason };
        resolve(this.#closeInfo);
        this.#wake?.();
      });
    });
  }

  /** Sends text, binary, or a value as JSON. */
  send(message: string | ArrayBuffer | object): void {
    this.ws.send(typeof message === "string" || message instanceof ArrayBuffer ? message : JSON.stringify(message));
  }

  /**
   * @param timeout - ms to wait (default 2000)
   * @returns the next message
   * @throws when none arrives in time, or the socket closed first
   */
  async next(timeout = 2000): Promise<string | ArrayBuffer> {
    const deadline = Date.now() + timeout;
    while (this.#queue.length === 0) {
      if (this.#closeInfo) throw new Error(`socket closed (${this.#closeInfo.code} ${this.#closeInfo.reason}) with no message`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no message within ${timeout} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
    }
    // SAFETY: the loop above ends only with a message queued.
    return this.#queue.shift() as string | ArrayBuffer;
  }

  /** @returns the next message parsed as JSON */
  async nextJSON<T = Record<string, unknown>>(timeout?: number): Promise<T> {
    const message = await this.next(timeout);
    if (typeof message !== "string") throw new Error("expected a text frame, got binary");
    return JSON.parse(message) as T;
  }

  /** @returns the next `count` messages, parsed as JSON */
  async frames<T = Record<string, unknown>>(count: number, timeout?: number): Promise<T[]> {
    const out: T[] = [];
    for (let i = 0; i < count; i++) out.push(await this.nextJSON<T>(timeout));
    return out;
  }

  /**
   * Waits `ms` and returns whatever arrived (to assert that nothing did).
   * @returns the messages received meanwhile
   */
  async drain(ms = 50): Promise<(string | ArrayBuffer)[]> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return this.#queue.splice(0);
  }

  /**
   * Calls a method over `rpc` frames and waits for its answer; frames with other
   * ids stay queued.
   * @returns the result
   * @throws an Error with the server's message when the call fails
   */
  async rpc(method: string, args: unknown[] = [], timeout = 2000): Promise<unknown> {
    const outcome = await this.stream(method, args, timeout);
    if (outcome.error !== undefined) throw new Error(outcome.error);
    return outcome.result;
  }

  /**
   * Calls a method and collects every answer frame: stream chunks, the result, or the error.
   * @returns `{ chunks, result, error }` once a done or error frame arrives
   */
  async stream(
    method: string,
    args: unknown[] = [],
    timeout = 2000,
  ): Promise<{ chunks: unknown[]; result?: unknown; error?: string }> {
    const id = crypto.randomUUID();
    this.send({ type: "rpc", id, method, args });
    const chunks: unknown[] = [];
    const deadline = Date.now() + timeout;
    const held: (string | ArrayBuffer)[] = [];
    try {
      for (;;) {
        const message = await this.next(Math.max(1, deadline - Date.now()));
        const frame = typeof message === "string" ? parseObject(message) : undefined;
        if (!frame || frame.type !== "rpc" || frame.id !== id) {
          held.push(message);
          continue;
        }
        if (frame.success === false) return { chunks, error: String(frame.error) };
        if (frame.done === false) chunks.push(frame.result);
        else return { chunks, result: frame.result };
      }
    } finally {
      this.#queue.unshift(...held);
    }
  }

  /** Closes the socket (default 1000) and waits until it is closed. */
  async close(code = 1000, reason = ""): Promise<CloseInfo> {
    try {
      this.ws.close(code, reason);
    } catch {
      // Already closing.
    }
    return this.closed;
  }
}
