import type { Observer } from "../lifecycle/capability";
import { errorMessage } from "../lifecycle/errors";
import type { Lifecycle } from "../lifecycle/lifecycle";

/** One job event: `<prefix>:<kind>` (`schedule:create`, `queue:retry`, …) and what it reports. */
export interface JobEvent {
  kind: string;
  id: string;
  callback?: string;
  /** A `since` reading when the work began: the event carries `durationMs`. */
  began?: number;
  attempt?: number;
  maxAttempts?: number;
  error?: unknown;
}

/** Publishes a job event on agents:schedule (the Scheduler's `schedule:*`, the Queue's `queue:*`); `prefix` names the owner's events. */
export function publishJob(observer: Observer, source: Lifecycle, prefix: string, event: JobEvent): void {
  if (!observer.since("schedule")) return;
  const { kind, id, callback, began, attempt, maxAttempts, error } = event;
  const failed = error !== undefined;
  // SAFETY: a DokitError carries a string `code`; anything else has none.
  const code = failed ? (error as { code?: unknown } | null)?.code : undefined;
  observer.emit("schedule", source, `${prefix}:${kind}`, {
    ...(callback !== undefined && { callback }),
    id,
    // A final failure counts its attempts; a run or a retry names the attempt it was.
    ...(attempt !== undefined && (kind === "error" ? { attempts: attempt } : { attempt })),
    ...(maxAttempts !== undefined && { maxAttempts }),
    ...(failed && { error: errorMessage(error) }),
    ...(typeof code === "string" && { code }),
    ...(began ? { began } : {}),
  });
}
