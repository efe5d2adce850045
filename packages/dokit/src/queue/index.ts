export { Queue } from "./queue";
export type { QueueCallbacks, QueueCriteria, QueueHandlers, QueueItem, QueueOptions, QueuePayload, QueuePushOptions } from "./types";
export type { RetryOptions } from "../jobs/retry";
export type { QueueErrorCode } from "./errors";
