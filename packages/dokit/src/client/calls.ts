// Pending calls. Each call is tied to the link it was sent on, so a socket
// that closes rejects exactly the calls that were in flight on it.
import type { Link } from "./link";
import type { CallOptions, StreamOptions } from "./types";

/** Accepts the current `{ timeout, stream }` shape and the older bare stream callbacks. */
export function splitCallOptions(options: CallOptions | StreamOptions | undefined): CallOptions | undefined {
  if (options && ("onChunk" in options || "onDone" in options || "onError" in options)) return { stream: options };
  return options as CallOptions | undefined;
}

/** Default timeout of non-streaming calls. */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

/** One call from `call()` until it settles. */
export class PendingCall {
  readonly id: string = crypto.randomUUID();
  /** The link it was sent on; `null` while it waits for an open socket. */
  link: Link | null = null;
  /** Set once the call has settled; later answers are ignored. */
  settled = false;
  /** Cancels a stream being drained (Cap'n Web). */
  cancel: (() => void) | undefined;
  readonly stream: StreamOptions | undefined;
  readonly #resolve: (value: unknown) => void;
  readonly #reject: (error: Error) => void;
  readonly #onSettle: (call: PendingCall) => void;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param method - the method name
   * @param args - its arguments
   * @param options - timeout and stream callbacks
   * @param defaultTimeout - the client's timeout for non-streaming calls
   * @param promise - the executor's resolve and reject
   * @param onSettle - removes the call from the client's books
   */
  constructor(
    readonly method: string,
    readonly args: unknown[],
    options: CallOptions | undefined,
    defaultTimeout: number,
    promise: { resolve: (value: unknown) => void; reject: (error: Error) => void },
    onSettle: (call: PendingCall) => void,
  ) {
    this.stream = options?.stream;
    this.#resolve = promise.resolve;
    this.#reject = promise.reject;
    this.#onSettle = onSettle;
    const timeout = options?.timeout ?? (this.stream ? 0 : defaultTimeout);
    if (timeout > 0) {
      this.#timer = setTimeout(
        () => this.fail(new Error(`RPC call to ${method} timed out after ${timeout}ms`)),
        timeout,
      );
    }
  }

  /** The JSON rpc request frame. */
  frame(): string {
    return JSON.stringify({ type: "rpc", id: this.id, method: this.method, args: this.args });
  }

  /** Delivers one stream chunk. */
  chunk(value: unknown): void {
    if (!this.settled) this.stream?.onChunk?.(value);
  }

  /** Settles with a result (and ends the stream). */
  succeed(value: unknown): void {
    if (!this.#settle()) return;
    this.#resolve(value);
    this.stream?.onDone?.(value);
  }

  /** Settles with an error (and reports it to the stream). */
  fail(error: Error): void {
    if (!this.#settle()) return;
    this.cancel?.();
    this.#reject(error);
    this.stream?.onError?.(error.message);
  }

  #settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    clearTimeout(this.#timer);
    this.#onSettle(this);
    return true;
  }
}

/**
 * Runs a call natively on a Cap'n Web link: a `ReadableStream` result is
 * drained into the stream callbacks when they are given; anything else
 * (live stubs included) is the result.
 */
export function invokeNative(invoke: NonNullable<Link["invoke"]>, call: PendingCall): void {
  invoke(call.method, call.args).then(
    async (result) => {
      if (!call.stream || !(result instanceof ReadableStream)) return call.succeed(result);
      const reader = result.getReader();
      call.cancel = () => void reader.cancel().catch(() => {});
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done || call.settled) break;
          call.chunk(value);
        }
        call.succeed(undefined);
      } catch (error) {
        call.fail(asError(error));
      }
    },
    (error: unknown) => call.fail(asError(error)),
  );
}

/** @returns `error` as an Error, keeping its message */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
