import type { Observer } from "../lifecycle/capability";
import { errorMessage } from "../lifecycle/errors";
import type { Lifecycle } from "../lifecycle/lifecycle";
import { channels, type EventChannelKey } from "./channels";

/**
 * Isolate-wide settings and counters. `values` (see `includeValues`) lets events
 * carry state values and frame bodies. `built` counts events built and `clock`
 * the clock reads made for events, so a test can prove that nothing is built or
 * timed while nobody listens.
 */
export const settings = { values: false, built: 0, clock: 0 };

/**
 * The one Observer: every lifecycle that installs `Observability` publishes through it. Each
 * capability builds its own payloads; this publishes them on the channel they name.
 */
export const observer: Observer = {
  get values() {
    return settings.values;
  },

  since(channel: string): number {
    if (!channels[channel as EventChannelKey]?.hasSubscribers) return 0;
    settings.clock++;
    return Date.now();
  },

  emit(channel: string, source: Lifecycle, type: string, payload: object): void {
    // SAFETY: a name that is no channel key finds no channel, and nothing is published.
    const target = channels[channel as EventChannelKey];
    if (!target?.hasSubscribers) return;
    settings.built++;
    const timestamp = Date.now();
    if ("began" in payload) {
      // SAFETY: `began` is a `since` reading (the Observer's contract).
      const { began, ...rest } = payload as { began: number };
      payload = { ...rest, durationMs: began && timestamp - began };
    }
    try {
      target.publish({ type, agent: source.host.constructor.name, name: source.name, timestamp, payload });
    } catch (error) {
      // workerd, unlike Node, rethrows a subscriber's error from publish(): it must not break the work that published.
      console.error(`dokit: a subscriber of ${type} events threw`, error);
    }
  },

  error(source: Lifecycle, where: string, error: unknown, connectionId?: string, type = "error"): void {
    // SAFETY: a DokitError carries a string `code`; other thrown values are checked below.
    const code = (error as { code?: unknown } | null)?.code;
    this.emit("lifecycle", source, type, {
      where,
      code: typeof code === "string" ? code : "INTERNAL",
      message: errorMessage(error),
      ...(connectionId !== undefined && { connectionId }),
    });
  },
};
