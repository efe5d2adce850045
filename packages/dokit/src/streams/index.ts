export { DEFAULT_MAX_CHUNK_BYTES, Streams } from "./streams";
export { sseResponse } from "./sse";
export type { SSEResponseOptions } from "./sse";
export { StreamClosedError, StreamNotFoundError, StreamSerializationError } from "./errors";
export type { StreamsErrorCode } from "./errors";
export type * from "./types";
