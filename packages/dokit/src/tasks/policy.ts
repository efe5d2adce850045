import { durationMs, MAX_DURATION_MS } from "./duration";
import { TasksFailure } from "./errors";
import type { TaskStepConfig } from "./types";

/** A step's retry and timeout policy, resolved. */
export interface StepPolicy {
  /** Attempts in all, the first included. */
  limit: number;
  /** The delay before the first retry, in ms. */
  delayMs: number;
  backoff: "constant" | "linear" | "exponential";
  timeoutMs: number;
}

/** The defaults: 5 attempts, 1 second doubling, 5 minutes per attempt. */
export const DEFAULT_POLICY: StepPolicy = { limit: 5, delayMs: 1000, backoff: "exponential", timeoutMs: 300_000 };

/**
 * @returns `config` over `defaults`
 * @throws TasksFailure INVALID_ARGUMENT for a limit that is no integer of at least 1, an unknown backoff, a bad duration
 */
export function resolvePolicy(config: TaskStepConfig | undefined, defaults: StepPolicy): StepPolicy {
  const retries = config?.retries;
  const policy: StepPolicy = {
    limit: retries?.limit ?? defaults.limit,
    delayMs: retries?.delay === undefined ? defaults.delayMs : durationMs(retries.delay, "retries.delay"),
    backoff: retries?.backoff ?? defaults.backoff,
    timeoutMs: config?.timeout === undefined ? defaults.timeoutMs : durationMs(config.timeout, "timeout"),
  };
  if (!Number.isInteger(policy.limit) || policy.limit < 1 || policy.limit > 1000) {
    throw new TasksFailure("INVALID_ARGUMENT", `Tasks: retries.limit must be an integer from 1 to 1000, got ${String(policy.limit)}`);
  }
  if (!["constant", "linear", "exponential"].includes(policy.backoff)) {
    throw new TasksFailure("INVALID_ARGUMENT", `Tasks: retries.backoff must be "constant", "linear" or "exponential", got ${String(policy.backoff)}`);
  }
  if (policy.timeoutMs < 1) throw new TasksFailure("INVALID_ARGUMENT", "Tasks: timeout must be at least 1 ms");
  return policy;
}

/** @returns the wait before the attempt after failed attempt `failures` (no jitter: replays and tests see the same times) */
export function retryDelayMs(policy: StepPolicy, failures: number): number {
  const factor = policy.backoff === "constant" ? 1 : policy.backoff === "linear" ? failures : 2 ** (failures - 1);
  return Math.min(MAX_DURATION_MS, policy.delayMs * factor);
}
