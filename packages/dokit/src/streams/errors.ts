import { DokitError, type LifecycleErrorCode } from "../lifecycle/errors";

/** The codes Streams (dokit/streams) throws with: the core's, and its own. */
export type StreamsErrorCode =
  | LifecycleErrorCode
  | "STREAM_CLOSED"
  | "STREAM_NOT_FOUND"
  | "STREAM_SERIALIZATION"
  | "STREAM_LIVE"
  | "TAG_CONFLICT"
  | "STALE_WRITER"
  | "CURSOR_PAST_END";

/**
 * Thrown when `open()` targets a settled stream, or an append reaches a stream that settled
 * (or was deleted) after the writer was made. Code `STREAM_CLOSED`.
 */
export class StreamClosedError extends DokitError<"STREAM_CLOSED"> {
  override readonly name = "StreamClosedError";
  /** The stream that no longer takes writes. */
  readonly streamId: string;
  /**
   * @param streamId - the stream
   * @param detail - why it takes no writes
   */
  constructor(streamId: string, detail: string) {
    super("STREAM_CLOSED", `Streams: stream "${streamId}" ${detail}`);
    this.streamId = streamId;
  }
}

/** Thrown when a read targets a stream that was never opened or was deleted (`status()` returns null instead). Code `STREAM_NOT_FOUND`. */
export class StreamNotFoundError extends DokitError<"STREAM_NOT_FOUND"> {
  override readonly name = "StreamNotFoundError";
  /** The stream that does not exist. */
  readonly streamId: string;
  /** @param streamId - the stream */
  constructor(streamId: string) {
    super("STREAM_NOT_FOUND", `Streams: stream "${streamId}" does not exist (never opened, or deleted)`);
    this.streamId = streamId;
  }
}

/** Thrown when a chunk or metadata value is not JSON or is over its size limit; nothing is stored. Code `STREAM_SERIALIZATION`. */
export class StreamSerializationError extends DokitError<"STREAM_SERIALIZATION"> {
  override readonly name = "StreamSerializationError";
  /**
   * @param context - what was being stored
   * @param detail - what is wrong with it
   */
  constructor(context: string, detail: string) {
    super("STREAM_SERIALIZATION", `Streams: ${context}: ${detail}`);
  }
}

/** @returns a DokitError with one of Streams' codes */
export function streamsError(code: StreamsErrorCode, message: string): DokitError<StreamsErrorCode> {
  return new DokitError<StreamsErrorCode>(code, `Streams: ${message}`);
}
