import type { Observer } from "../lifecycle/capability";
import type { Lifecycle } from "../lifecycle/lifecycle";
import type { StateSource } from "./validate";

/**
 * Publishes `state:update` (no `code`) or `state:reject` (with the refusal's `code`) when agents:state
 * has subscribers: who changed it and the size of `json` (or of `value` as JSON); the value
 * itself only when the observer allows values.
 */
export function publishState(observer: Observer, source: Lifecycle, from: StateSource, json: string | undefined, value: unknown, code?: string): void {
  if (!observer.since("state")) return;
  let size = json?.length;
  if (size === undefined) {
    try {
      size = JSON.stringify(value)?.length;
    } catch {
      // not serializable: no size
    }
  }
  observer.emit("state", source, code ? "state:reject" : "state:update", {
    ...(from === "server" ? { source: "server" } : { source: "client", connectionId: from.id }),
    ...(code && { code }),
    ...(size !== undefined && { size }),
    ...(!code && observer.values && { state: value }),
  });
}
