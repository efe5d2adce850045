import { TasksFailure } from "./errors";

/** Units accepted in a {@link TaskDurationString}. */
export type TaskDurationUnit = "second" | "minute" | "hour" | "day" | "week";

/** A duration such as `"10 seconds"` or `"1 day"`; a plain number is milliseconds. */
export type TaskDurationString = `${number} ${TaskDurationUnit}${"" | "s"}`;

const UNIT_MS: Record<TaskDurationUnit, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000 };

/** The longest duration accepted: 365 days (deadlines are armed on the alarm). */
export const MAX_DURATION_MS = 365 * 86_400_000;

/**
 * @param what - the option, for errors
 * @returns `duration` in ms
 * @throws TasksFailure INVALID_ARGUMENT for a negative, non-finite or unparsable duration, or one over 365 days
 */
export function durationMs(duration: number | TaskDurationString, what: string): number {
  let ms: number | undefined;
  if (typeof duration === "number") ms = duration;
  else if (typeof duration === "string") {
    const match = /^\s*(\d+(?:\.\d+)?)\s+(second|minute|hour|day|week)s?\s*$/.exec(duration);
    if (match) ms = Number(match[1]) * UNIT_MS[match[2] as TaskDurationUnit];
  }
  if (ms === undefined || !Number.isFinite(ms) || ms < 0 || ms > MAX_DURATION_MS) {
    throw new TasksFailure("INVALID_ARGUMENT", `Tasks: ${what} must be a number of ms or a string like "30 seconds", from 0 to 365 days; got ${JSON.stringify(duration)}`);
  }
  return Math.round(ms);
}
