import type { EventChannelKey, FrameNote, Observer } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { errorMessage } from "../lifecycle/errors";
import type { Lifecycle } from "../lifecycle/lifecycle";
import { channels } from "./channels";

/**
 * Isolate-wide settings and counters. `values` (see `includeValues`) lets events
 * carry state values and frame bodies. `built` counts events built and `clock`
 * the clock reads made for events, so a test can prove that nothing is built or
 * timed while nobody listens.
 */
export const settings = { values: false, built: 0, clock: 0 };

/** The one Observer: every lifecycle that installs `Observability` publishes through it. */
export const observer: Observer = {
  get values() {
    return settings.values;
  },

  since(channel: EventChannelKey): number {
    if (!channels[channel]?.hasSubscribers) return 0;
    settings.clock++;
    return Date.now();
  },

  emit(channel: EventChannelKey, source: Lifecycle, type: string, payload: object): void {
    const target = channels[channel];
    if (!target) return;
    settings.built++;
    try {
      target.publish({ type, agent: source.host.constructor.name, name: source.name, timestamp: Date.now(), payload });
    } catch (error) {
      // workerd, unlike Node, rethrows a subscriber's error from publish(): it must not break the work that published.
      console.error(`dokit: a subscriber of ${type} events threw`, error);
    }
  },

  lifecycle(source: Lifecycle, type: string, began?: number, extra?: object, connectionId?: string): void {
    if (!channels.lifecycle?.hasSubscribers) return;
    this.emit("lifecycle", source, type, {
      ...(connectionId !== undefined && { connectionId }),
      ...(began !== undefined && { durationMs: began && Date.now() - began }),
      ...extra,
    });
  },

  error(source: Lifecycle, where: string, error: unknown, connectionId?: string, type = "error"): void {
    if (!channels.lifecycle?.hasSubscribers) return;
    // SAFETY: a DokitError carries a string `code`; other thrown values are checked below.
    const code = (error as { code?: unknown } | null)?.code;
    this.emit("lifecycle", source, type, {
      where,
      code: typeof code === "string" ? code : "INTERNAL",
      message: errorMessage(error),
      ...(connectionId !== undefined && { connectionId }),
    });
  },

  frame(source: Lifecycle, connection: Connection, message: string | ArrayBuffer, note: FrameNote, began: number): void {
    this.emit("message", source, "message:dispatch", {
      connectionId: connection.id,
      type: note.type || (typeof message === "string" ? "text" : "binary"),
      handler: note.handler,
      size: typeof message === "string" ? message.length : message.byteLength,
      durationMs: Date.now() - began,
      ...(settings.values && { body: message }),
    });
  },

  rpc(source: Lifecycle, connection: Connection, method: string, began: number, failed: boolean, outcome: unknown): void {
    const payload: Record<string, unknown> = { connectionId: connection.id, method, ok: !failed, durationMs: Date.now() - began };
    if (typeof outcome === "number") {
      payload.streaming = true;
      payload.chunks = outcome;
    }
    this.emit("rpc", source, "rpc", payload);
    if (!failed) return;
    // SAFETY: a DokitError (or WireError) carries a string `code`; anything else has none.
    const code = (outcome as { code?: unknown } | null)?.code;
    this.emit("rpc", source, "rpc:error", { ...payload, error: errorMessage(outcome), ...(typeof code === "string" && { code }) });
  },

  state(source: Lifecycle, from: "server" | Connection, json: string | undefined, value: unknown, code?: string): void {
    if (!channels.state?.hasSubscribers) return;
    let size = json?.length;
    if (size === undefined) {
      try {
        size = JSON.stringify(value)?.length;
      } catch {
        // not serializable: no size
      }
    }
    this.emit("state", source, code ? "state:reject" : "state:update", {
      ...(from === "server" ? { source: "server" } : { source: "client", connectionId: from.id }),
      ...(code && { code }),
      ...(size !== undefined && { size }),
      ...(!code && settings.values && { state: value }),
    });
  },

  job(
    source: Lifecycle,
    owner: string,
    kind: string,
    id: string,
    callback?: string,
    began?: number,
    attempt?: number,
    maxAttempts?: number,
    error?: unknown,
  ): void {
    if (!channels.schedule?.hasSubscribers) return;
    const type = `${owner === "Queue" ? "queue" : "schedule"}:${kind}`;
    const failed = error !== undefined;
    // SAFETY: a DokitError carries a string `code`; anything else has none.
    const code = failed ? (error as { code?: unknown } | null)?.code : undefined;
    this.emit("schedule", source, type, {
      ...(callback !== undefined && { callback }),
      id,
      // A final failure counts its attempts; a run or a retry names the attempt it was.
      ...(attempt !== undefined && (type.endsWith(":error") ? { attempts: attempt } : { attempt })),
      ...(maxAttempts !== undefined && { maxAttempts }),
      ...(failed && { error: errorMessage(error) }),
      ...(typeof code === "string" && { code }),
      ...(began ? { durationMs: Date.now() - began } : {}),
    });
  },

  closed(source: Lifecycle, connection: Connection, code: number, reason: string, wasClean: boolean, at: number | undefined): void {
    if (!channels.lifecycle?.hasSubscribers) return;
    this.emit("lifecycle", source, "disconnect", {
      connectionId: connection.id,
      code,
      reason,
      wasClean,
      ...(at !== undefined && { durationMs: Date.now() - at }),
    });
  },
};
