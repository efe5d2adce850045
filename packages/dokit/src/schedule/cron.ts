import { Cron } from "croner";
import { DokitError } from "../lifecycle/errors";
import type { ScheduleErrorCode } from "./errors";

// Cron through croner (no dependencies, IANA time zones through Intl, documented
// DST rules, no timers unless given a function: a paused Cron only computes).
// DST, as croner resolves it and docs/schedule.md documents: a local time that a
// spring-forward skips runs once, at the first valid time after the gap; a local
// time that a fall-back repeats runs once, at its first occurrence.

/**
 * @returns a parsed 5-field cron expression, checked together with its time zone
 * @throws DokitError INVALID_SCHEDULE for an expression that is not 5 valid fields, an unknown time zone, or one that never runs
 */
function parseCron(expression: string, timeZone: string | undefined, owner = "Scheduler"): Cron {
  let cron: Cron;
  try {
    cron = new Cron(expression, { mode: "5-part", paused: true, ...(timeZone !== undefined ? { timezone: timeZone } : {}) });
    // An unknown time zone only shows when a time is computed.
    cron.nextRun(new Date(0));
  } catch (error) {
    const what = timeZone === undefined ? `"${expression}"` : `"${expression}" in time zone "${timeZone}"`;
    throw new DokitError<ScheduleErrorCode>("INVALID_SCHEDULE", `${owner}: invalid cron expression ${what} (${(error as Error).message})`, { cause: error });
  }
  return cron;
}

/**
 * The next time a cron expression matches, strictly after `after`.
 * @param expression - 5 fields: minute hour day-of-month month day-of-week
 * @param after - ms since the epoch
 * @param timeZone - an IANA time zone (default UTC)
 * @returns ms since the epoch
 * @throws DokitError INVALID_SCHEDULE when the expression is invalid or never matches again
 */
export function nextCronRun(expression: string, after: number, timeZone?: string): number {
  const next = parseCron(expression, timeZone ?? "UTC").nextRun(new Date(after));
  if (!next) throw new DokitError<ScheduleErrorCode>("INVALID_SCHEDULE", `Scheduler: the cron expression "${expression}" never runs after ${new Date(after).toISOString()}`);
  return next.getTime();
}
