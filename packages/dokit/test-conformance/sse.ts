// A small SSE reader for the raw-HTTP tests: frames as the wire carries them,
// `retry:`-only frames included (they dispatch no event, but they are the point).

/** One SSE frame. */
export interface Frame {
  id?: string;
  data?: string;
  retry?: string;
  comment?: string;
}

/** Reads SSE frames from a response body, one at a time. */
export class SseReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buffer = "";

  /** @param response - an SSE response */
  constructor(response: Response) {
    if (!response.body) throw new Error("the response has no body");
    this.#reader = response.body.getReader();
  }

  /** @returns the next frame, or `undefined` once the stream ended */
  async next(timeoutMs = 5000): Promise<Frame | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = this.#buffer.indexOf("\n\n");
      if (end >= 0) {
        const raw = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        return parseFrame(raw);
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("timed out reading the SSE stream");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), left)));
      const chunk = await Promise.race([this.#reader.read(), timeout]).finally(() => clearTimeout(timer));
      if (chunk === "timeout") throw new Error("timed out reading the SSE stream");
      if (chunk.done) return undefined;
      this.#buffer += this.#decoder.decode(chunk.value, { stream: true });
    }
  }

  /** @returns every frame up to the end of the stream */
  async rest(timeoutMs = 5000): Promise<Frame[]> {
    const frames: Frame[] = [];
    for (let frame = await this.next(timeoutMs); frame; frame = await this.next(timeoutMs)) frames.push(frame);
    return frames;
  }

  /** Stops reading (cancels the body). */
  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }
}

function parseFrame(raw: string): Frame {
  const frame: Frame = {};
  for (const line of raw.split("\n")) {
    if (line.startsWith(":")) frame.comment = line.slice(1).trim();
    else if (line.startsWith("id:")) frame.id = line.slice(3).trim();
    else if (line.startsWith("retry:")) frame.retry = line.slice(6).trim();
    else if (line.startsWith("data:")) frame.data = (frame.data ?? "") + line.slice(5).trim();
  }
  return frame;
}
