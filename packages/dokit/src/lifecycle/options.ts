// What a host passes to Lifecycle.install and what it may define for dokit to call.

/** The platform entry points `install` attaches to the object. */
export type EntryPoint = "fetch" | "alarm" | "webSocketMessage" | "webSocketClose" | "webSocketError";
export const ENTRY_POINTS: readonly EntryPoint[] = ["fetch", "alarm", "webSocketMessage", "webSocketClose", "webSocketError"];

/** Options of {@link Lifecycle.install}. */
export interface LifecycleOptions {
  /**
   * Entry points the host class defines itself. dokit leaves those in place
   * and the host delegates with one call, e.g.
   * `(await this.lifecycle.fetch(request)) ?? this.myHandling(request)`.
   * A host method not listed here makes `install` throw, so none is skipped silently.
   */
  delegates?: readonly EntryPoint[];
  /** The class name sent in identity frames (default: the host's constructor name, kebab-cased). */
  className?: string;
}

/** Optional hooks the host object may define; dokit calls them when present. */
export interface HostHooks {
  /** Runs once per start (after capability start hooks), inside `blockConcurrencyWhile`. */
  onStart?(props?: Record<string, unknown>): void | Promise<void>;
  /** Receives HTTP requests no capability claimed. */
  onRequest?(request: Request): Response | Promise<Response>;
  /** Runs when the host's own alarm is due. */
  onAlarm?(info?: AlarmInvocationInfo): void | Promise<void>;
}
