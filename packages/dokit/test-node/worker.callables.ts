// The callables both scenario servers of worker.ts (RefAgent and DokitAgent) expose. Written
// once against a small host interface so the reference server and the dokit server share it.
import { RpcTarget } from "cloudflare:workers";

/** What the callables need from the object hosting them. */
export interface ScenarioHost {
  /** Replaces the synced state from the server side. */
  setServerState(state: unknown): void;
  /** Closes the connection with this id. */
  closeConnection(id: string, code: number, reason: string): void;
}

/** A counter handed out by reference (Cap'n Web only). */
export class Counter extends RpcTarget {
  #count = 0;
  /** @returns the count after adding one */
  increment(): number {
    return ++this.#count;
  }
}

/** The remote interface of the scenario objects. */
export class ScenarioCallables extends RpcTarget {
  readonly #host: ScenarioHost;
  constructor(host: ScenarioHost) {
    super();
    this.#host = host;
  }
  /** @returns a + b */
  add(a: number, b: number): number {
    return a + b;
  }
  /** @returns its argument, after an async hop */
  async echo<T>(value: T): Promise<T> {
    return value;
  }
  /** Throws an Error with `message`. */
  fail(message: string): never {
    throw new Error(message);
  }
  /** @returns `value` after `ms` milliseconds */
  async slow(ms: number, value = "slow"): Promise<string> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return value;
  }
  /** Streams `from`, `from - 1`, … 0. */
  countdown(from: number): ReadableStream<number> {
    return new ReadableStream<number>({
      start(controller) {
        for (let n = from; n >= 0; n--) controller.enqueue(n);
        controller.close();
      },
    });
  }
  /** Streams 1…`count`, one chunk every `ms` milliseconds. */
  tick(count: number, ms: number): ReadableStream<number> {
    let n = 0;
    return new ReadableStream<number>({
      async pull(controller) {
        await new Promise((resolve) => setTimeout(resolve, ms));
        if (++n > count) controller.close();
        else controller.enqueue(n);
      },
    });
  }
  /** Streams two chunks, then errors. */
  brokenStream(): ReadableStream<string> {
    let step = 0;
    return new ReadableStream<string>({
      pull(controller) {
        step++;
        if (step <= 2) controller.enqueue(`chunk ${step}`);
        else controller.error(new Error("stream broke"));
      },
    });
  }
  /** Replaces the synced state from the server side. */
  setServerState(state: unknown): void {
    this.#host.setServerState(state);
  }
  /** Closes the caller's connection (the id is the client's `_pk`) with `code`. */
  drop(id: string, code: number, reason = "dropped"): void {
    this.#host.closeConnection(id, code, reason);
  }
  /** @returns a live counter (an error on the JSON transport) */
  counter(): Counter {
    return new Counter();
  }
}
