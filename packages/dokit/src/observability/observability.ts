import type { Capability, Claims } from "../lifecycle/capability";
import type { EventChannelKey } from "./channels";
import { DokitError } from "../lifecycle/errors";
import { channels } from "./channels";
import type { ChannelEventMap } from "./events";
import { observer, settings } from "./observer";
import type { ObservabilityErrorCode } from "./errors";

/**
 * Makes an object publish structured events on `node:diagnostics_channel`
 * (`agents:lifecycle`, `agents:message`, `agents:rpc`, `agents:state`,
 * `agents:schedule`, `agents:mcp`) for every capability it uses. Nothing is
 * built or timed while a channel has no subscribers.
 *
 * ```ts
 * readonly lifecycle = Lifecycle.install(this).use(new Observability()).use(this.webSockets);
 * ```
 */
export class Observability implements Capability {
  readonly capabilityName = "Observability";

  attach(claims: Claims): void {
    claims.observe(observer);
  }
}

/**
 * Subscribes to one channel with typed events.
 * @param key - the channel's key (`"rpc"` for `agents:rpc`)
 * @param callback - receives each event; it runs inside the work that published it, so keep it short
 * @returns a function that unsubscribes
 * @throws DokitError NOT_INSTALLED where the runtime has no node:diagnostics_channel
 *   (a compatibility date before 2026-08-04 without `nodejs_compat`)
 */
export function subscribe<K extends EventChannelKey>(key: K, callback: (event: ChannelEventMap[K]) => void): () => void {
  const channel = channels[key];
  if (!channel) {
    throw new DokitError<ObservabilityErrorCode>(
      "NOT_INSTALLED",
      "node:diagnostics_channel is not available: add the nodejs_compat compatibility flag, or a compatibility_date of 2026-08-04 or later",
    );
  }
  // SAFETY: dokit publishes only ChannelEventMap[K] events on this channel.
  const listener = callback as (message: unknown) => void;
  channel.subscribe(listener);
  return () => void channel.unsubscribe(listener);
}

/**
 * Lets events carry values (isolate-wide): the state in `state:update`, the
 * message in `message:dispatch`. Off by default: values may hold personal data
 * or secrets, and tail workers and log pipelines keep what they receive.
 * @param on - `false` turns it off again
 */
export function includeValues(on = true): void {
  settings.values = on;
}
