// Objects for the dokit/testing helpers' tests: each answers `ping()` with an id chosen
// in its constructor, so a test also sees by itself whether an instance is fresh.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";

/** Holds nothing open: it hibernates once idle. */
export class Sleeper extends DurableObject<Env> {
  readonly instance = crypto.randomUUID();
  readonly lifecycle = Lifecycle.install(this);

  ping(): string {
    return this.instance;
  }
}

/** Runs an interval timer from its first call on: the timer keeps it in memory. */
export class Ticker extends DurableObject<Env> {
  readonly instance = crypto.randomUUID();
  #ticks = 0;
  #timer: ReturnType<typeof setInterval> | undefined;

  ping(): string {
    this.#timer ??= setInterval(() => this.#ticks++, 1_000);
    return this.instance;
  }
}

/** Answers a stream that never ends (what a server's notification stream looks like). */
export class Source extends DurableObject<Env> {
  async fetch(): Promise<Response> {
    const { readable, writable } = new TransformStream();
    const writer = writable.getWriter();
    void writer.write(new TextEncoder().encode(": open\n\n"));
    return new Response(readable, { headers: { "content-type": "text/event-stream" } });
  }
}

/** Reads a never-ending stream from `Source` from its first call on, and says so as dokit's capabilities do (`keepsAwake()`). */
export class Streamer extends DurableObject<Env> {
  readonly instance = crypto.randomUUID();
  #open = false;
  readonly stream = { keepsAwake: () => (this.#open ? ["a stream from Source is open"] : []) };

  async ping(): Promise<string> {
    if (!this.#open) {
      this.#open = true;
      const response = await this.env.SOURCE.getByName("source").fetch("https://source.test/");
      void (async () => {
        // SAFETY: Source always answers a body.
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        while (!(await reader.read()).done);
        this.#open = false;
      })();
    }
    return this.instance;
  }
}
