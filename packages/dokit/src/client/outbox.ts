// What the client keeps while its socket is down: messages and calls, sent in
// order once a socket opens. Bounded, so a long outage cannot grow it without
// end; the oldest go first, and each one dropped is reported, never lost silently.
import { byteSize } from "./binary";
import type { AgentClientMessage } from "./binary";
import { PendingCall } from "./calls";
import type { AgentClientOptions } from "./types";

/** Default most messages and calls kept while the socket is down. */
export const DEFAULT_MAX_QUEUED_MESSAGES = 100;
/** Default most bytes of messages kept while the socket is down (1 MiB). */
export const DEFAULT_MAX_QUEUED_BYTES = 1024 * 1024;

/** A message or a call waiting for a socket. */
export type Outgoing = PendingCall | AgentClientMessage;

/**
 * Adds `item` to `outbox`, then drops the oldest entries while it holds more than the options
 * allow: a dropped call rejects with `Send queue full`, a dropped message goes to
 * `onMessageDropped` (default: a console warning). A message larger than the byte limit on its
 * own is dropped at once.
 */
export function enqueue(outbox: Outgoing[], item: Outgoing, options: AgentClientOptions<never>): void {
  outbox.push(item);
  const maxMessages = options.maxQueuedMessages ?? DEFAULT_MAX_QUEUED_MESSAGES;
  const maxBytes = options.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
  let bytes = 0;
  for (const queued of outbox) if (!(queued instanceof PendingCall)) bytes += byteSize(queued);
  while (outbox.length > 0 && (outbox.length > maxMessages || bytes > maxBytes)) {
    const dropped = outbox.shift() as Outgoing;
    if (dropped instanceof PendingCall) {
      dropped.fail(new Error("Send queue full"));
      continue;
    }
    bytes -= byteSize(dropped);
    if (options.onMessageDropped) options.onMessageDropped(dropped);
    else console.warn(`dokit: dropped a queued message (${byteSize(dropped)} bytes): the send queue is full while the socket is down`);
  }
}
