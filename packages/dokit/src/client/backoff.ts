// Reconnect delays. Our own loop instead of partysocket: the client must know
// which socket each call went out on (to reject exactly those on close) and
// must not replay a blind send buffer (a stale state frame would overwrite the
// server's newer state), so it owns the socket lifecycle either way; the loop
// itself is a few lines, and dropping partysocket keeps `dokit/client` small.
import type { AgentClientOptions } from "./types";

/**
 * @param attempt - 1 for the first retry after a close
 * @returns the delay before that attempt: exponential, capped, with jitter down to half
 */
export function reconnectDelay(options: AgentClientOptions<never>, attempt: number): number {
  const min = options.minReconnectionDelay ?? 1000;
  const max = options.maxReconnectionDelay ?? 10_000;
  const grow = options.reconnectionDelayGrowFactor ?? 1.3;
  const delay = Math.min(max, min * grow ** Math.max(0, attempt - 1));
  return delay * (0.5 + Math.random() / 2);
}

/** A connection that stayed open this long resets the backoff. */
export const MIN_UPTIME_MS = 5000;
