/** The shortest time between two answers of one kind to one connection. */
const ANSWER_INTERVAL_MS = 1000;

/**
 * Decides whether to answer a connection's request for something it already holds (the awareness, the
 * document): its first request is answered; a repeat only once what it asks for changed since its last
 * answer, and at least a second after it. A connection that was answered holds that answer plus every
 * change relayed to it since, so a repeat adds nothing; a client that repeats the request without
 * reading queues one answer, not one per request. The rule does not read `bufferedAmount` (what the
 * runtime has not yet written to the socket): workerd reports it on server sockets from 1.20261117
 * on, and earlier runtimes (1.20261102, the one @cloudflare/vitest-plugin 1.5.0 runs) have none, so
 * it holds on every runtime.
 */
export class Answers {
  /** Per connection id: the version and time of its last answer. */
  readonly #last = new Map<string, { version: number; at: number }>();

  /** @returns whether to answer now (then the answer is counted as sent) */
  take(id: string, version: number): boolean {
    const now = Date.now();
    const last = this.#last.get(id);
    if (last && (last.version === version || now - last.at < ANSWER_INTERVAL_MS)) return false;
    this.#last.set(id, { version, at: now });
    return true;
  }

  /** Forgets a closed connection. */
  forget(id: string): void {
    this.#last.delete(id);
  }
}
