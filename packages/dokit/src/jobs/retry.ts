import { DokitError } from "../lifecycle/errors";
import type { JobErrorCode } from "./errors";

/** How a failing job is retried: attempts include the first; delays grow exponentially with jitter. */
export interface RetryOptions {
  /** Attempts in all, the first included (default 3). */
  maxAttempts?: number;
  /** The delay before the first retry, in ms; it doubles with each further retry (default 100). */
  baseDelayMs?: number;
  /** The longest delay between two attempts, in ms (default 3000). */
  maxDelayMs?: number;
}

/** The longest retry delay accepted: 365 days (a retry is armed on the alarm, which has a latest time). */
const MAX_RETRY_DELAY_MS = 365 * 86_400_000;

/** The reference's defaults (agents: maxAttempts 3, 100 ms, 3 s). */
export const DEFAULT_RETRY: Required<RetryOptions> = { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 3000 };

/**
 * @param owner - the capability, for errors
 * @returns `retry` checked and filled from `defaults`
 * @throws DokitError INVALID_RETRY for a non-integer or non-positive `maxAttempts`, a negative delay or one over 365 days, or `baseDelayMs > maxDelayMs`
 */
export function resolveRetry(owner: string, retry: RetryOptions | undefined, defaults: Required<RetryOptions> = DEFAULT_RETRY): Required<RetryOptions> {
  const resolved = { ...defaults, ...definedOnly(retry) };
  const { maxAttempts, baseDelayMs, maxDelayMs } = resolved;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new DokitError<JobErrorCode>("INVALID_RETRY", `${owner}: retry.maxAttempts must be an integer of at least 1, got ${String(maxAttempts)}`);
  }
  for (const [name, value] of [["baseDelayMs", baseDelayMs], ["maxDelayMs", maxDelayMs]] as const) {
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > MAX_RETRY_DELAY_MS) {
      throw new DokitError<JobErrorCode>("INVALID_RETRY", `${owner}: retry.${name} must be a number of ms from 0 to ${MAX_RETRY_DELAY_MS} (365 days), got ${String(value)}`);
    }
  }
  if (baseDelayMs > maxDelayMs) {
    throw new DokitError<JobErrorCode>("INVALID_RETRY", `${owner}: retry.baseDelayMs (${baseDelayMs}) must not exceed retry.maxDelayMs (${maxDelayMs})`);
  }
  return resolved;
}

function definedOnly(retry: RetryOptions | undefined): RetryOptions {
  const out: RetryOptions = {};
  if (retry?.maxAttempts !== undefined) out.maxAttempts = retry.maxAttempts;
  if (retry?.baseDelayMs !== undefined) out.baseDelayMs = retry.baseDelayMs;
  if (retry?.maxDelayMs !== undefined) out.maxDelayMs = retry.maxDelayMs;
  return out;
}

/**
 * The wait before the next attempt after `failures` failed ones: exponential
 * (`baseDelayMs · 2^(failures-1)`, capped at `maxDelayMs`) with "equal jitter":
 * a random point in the upper half, so retries of many jobs spread out while
 * each wait still grows.
 * @param random - a number in [0, 1) (default `Math.random()`)
 * @returns milliseconds to wait
 */
export function backoffMs(failures: number, retry: Required<RetryOptions>, random: number = Math.random()): number {
  const cap = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** Math.max(0, failures - 1));
  return Math.round(cap / 2 + (cap / 2) * random);
}
