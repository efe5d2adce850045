// A small SSE reader for raw-HTTP MCP tests, inside workerd (test/mcp) and in
// Node (test-conformance): frames as the wire carries them.

/** One SSE frame. */
export interface SseFrame {
  id?: string;
  data?: string;
  retry?: string;
  comment?: string;
}

/** Reads SSE frames from a response body, one at a time. */
export class SseReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  readonly #events: boolean;
  #buffer = "";
  /**
   * Text read since `#buffer` last held a frame end, not yet joined to it: joining (and searching)
   * only when a frame completes keeps reading a large frame linear.
   */
  #pending: string[] = [];
  /** The last `retry:` value the stream announced (kept when `events` skips its frame). */
  retry: string | undefined;

  /**
   * @param response - an SSE response
   * @param options - `events: true` reads as a client does: a frame holding only `retry:`
   *   dispatches no event, so `next()` skips it (its value lands in `retry`)
   */
  constructor(response: Response, options: { events?: boolean } = {}) {
    if (!response.body) throw new Error("the response has no body");
    this.#reader = response.body.getReader();
    this.#events = options.events === true;
  }

  /** @returns the next frame, or `undefined` once the stream ended */
  async next(timeoutMs = 5000): Promise<SseFrame | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = this.#buffer.indexOf("\n\n");
      if (end >= 0) {
        const frame = parseFrame(this.#buffer.slice(0, end));
        this.#buffer = this.#buffer.slice(end + 2);
        if (frame.retry !== undefined) this.retry = frame.retry;
        if (this.#events && frame.retry !== undefined && Object.keys(frame).length === 1) continue;
        return frame;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("timed out reading the SSE stream");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), left)));
      const chunk = await Promise.race([this.#reader.read(), timeout]).finally(() => clearTimeout(timer));
      if (chunk === "timeout") throw new Error("timed out reading the SSE stream");
      if (chunk.done) return undefined;
      const text = this.#decoder.decode(chunk.value, { stream: true });
      const before = this.#pending.at(-1) ?? this.#buffer;
      if ((before.slice(-1) + text).includes("\n\n")) {
        this.#buffer += this.#pending.join("") + text;
        this.#pending = [];
      } else {
        this.#pending.push(text);
      }
    }
  }

  /** @returns the next frame that carries a JSON-RPC message, parsed, with its event id */
  async nextMessage(timeoutMs = 5000): Promise<{ id?: string; message: Record<string, unknown> } | undefined> {
    for (;;) {
      const frame = await this.next(timeoutMs);
      if (!frame) return undefined;
      if (frame.data) return { id: frame.id, message: JSON.parse(frame.data) };
    }
  }

  /** @returns every frame up to the end of the stream */
  async rest(timeoutMs = 5000): Promise<SseFrame[]> {
    const frames: SseFrame[] = [];
    for (let frame = await this.next(timeoutMs); frame; frame = await this.next(timeoutMs)) frames.push(frame);
    return frames;
  }

  /** Stops reading (cancels the body). */
  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }
}

function parseFrame(raw: string): SseFrame {
  const frame: SseFrame = {};
  for (const line of raw.split("\n")) {
    if (line.startsWith(":")) frame.comment = line.slice(1).trim();
    else if (line.startsWith("id:")) frame.id = line.slice(3).trim();
    else if (line.startsWith("retry:")) frame.retry = line.slice(6).trim();
    else if (line.startsWith("data:")) frame.data = (frame.data ?? "") + line.slice(5).trim();
  }
  return frame;
}
