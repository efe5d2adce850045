// Frames of dokit's stream readers over WebSockets (dokit/streams; docs/protocol.md).
// Shared by server and client; holds no behaviour beyond naming and building frames.
// None of them is an Agents protocol frame: the official client ignores them.

/** One durable chunk as the wire carries it: its cursor (`seq`) and its JSON value. */
export type StreamWireChunk = { seq: number; chunk: unknown };

/** Client → server: start reading `stream` from cursor `from` (default 0): replay, then live appends. */
export type StreamReadFrame = { type: "dokit_stream_read"; stream: string; from?: number };
/** Client → server: stop reading `stream`. */
export type StreamCancelFrame = { type: "dokit_stream_cancel"; stream: string };
/**
 * Client → server: the replay round that ended with `token` was received. Until it is sent, the
 * connection's read frames are ignored; `reads` asks again for every read the client is still
 * waiting on, served once the token matches (or when nothing is owed, after the object restarted).
 */
export type StreamAckFrame = { type: "dokit_stream_ack"; token: string; reads?: { stream: string; from: number }[] };

/** Server → client: consecutive chunks of `stream`, in cursor order. */
export type StreamChunksFrame = { type: "dokit_stream"; stream: string; chunks: StreamWireChunk[] };
/**
 * Server → client: every chunk stored so far was sent; `cursor` is the next one to come. `token`
 * (when the replay sent chunks) is to be acknowledged at once with `dokit_stream_ack`.
 */
export type StreamUpToDateFrame = { type: "dokit_stream_up_to_date"; stream: string; cursor: number; token?: string };
/**
 * Server → client: the replay stopped at `cursor` (more is stored than one round sends); acknowledge
 * `token` with `dokit_stream_ack`, asking for `stream` from `cursor` in its `reads` to continue.
 * The reader is not tailing until it does.
 */
export type StreamMoreFrame = { type: "dokit_stream_more"; stream: string; cursor: number; token: string };
/**
 * Server → client: the reader of `stream` ended. `completed` / `errored` (with the recorded `error`):
 * every chunk was sent; `deleted`: the stream and its chunks were removed (by `delete()`, a cutover's
 * `discard`, or retention), `cursor` is how many chunks it had.
 */
export type StreamEndFrame = {
  type: "dokit_stream_end";
  stream: string;
  state: "completed" | "errored" | "deleted";
  cursor: number;
  error?: string;
};
/** Server → client: a read was refused (`dokit_error` with the stream it names); nothing more comes for it. */
export type StreamErrorFrame = {
  type: "dokit_error";
  code: StreamWireErrorCode;
  error: string;
  stream: string;
};
/** Why a read was refused. */
export type StreamWireErrorCode = "STREAM_NOT_FOUND" | "CURSOR_PAST_END" | "STREAM_READ_REFUSED" | "INVALID_STREAM_FRAME" | "TOO_MANY_READS";

export const STREAM_READ = "dokit_stream_read";
export const STREAM_CANCEL = "dokit_stream_cancel";
export const STREAM_CHUNKS = "dokit_stream";
export const STREAM_UP_TO_DATE = "dokit_stream_up_to_date";
export const STREAM_END = "dokit_stream_end";
export const STREAM_MORE = "dokit_stream_more";
export const STREAM_ACK = "dokit_stream_ack";
/** Every stream frame type starts with this (the client routes on it before parsing). */
export const STREAM_FRAME_PREFIX = '{"type":"dokit_stream';
