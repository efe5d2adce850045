export { Tasks } from "./tasks";
export { DuplicateTaskStepError, MAX_SERIALIZED_BYTES, MissingTaskDefinitionError, NonRetryableError, TaskReplayDivergedError, TaskSerializationError, TasksFailure } from "./errors";
export type { TasksErrorCode } from "./errors";
export type { TaskDurationString, TaskDurationUnit } from "./duration";
export type * from "./types";
