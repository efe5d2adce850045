export { Sessions, DEFAULT_MAX_CLIENT_MESSAGE_BYTES } from "./sessions";
export { Session } from "./handle";
export type { SessionMirrorOptions, SessionSyncWriter } from "./handle";
export { COMPACTION_PREFIX, createCompactFunction, isCompactionMessage } from "./compaction";
export type { CompactionFunction, CompactOptions, CompactResult } from "./compaction";
export type * from "./types";
export type { SessionsErrorCode } from "./errors";
