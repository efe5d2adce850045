// dokit/protocol: the wire's literals, one file per protocol family. A new
// capability with frames of its own adds a file here and its lines below.

// The Agents protocol: identity, state, rpc.
export { IDENTITY, STATE, STATE_ERROR, RPC, CONNECTION_ID_PARAM, isRpcRequest, isStateFrame, rpcErrors } from "./agents";
export type { IdentityFrame, StateFrame, StateErrorFrame, RpcRequestFrame, RpcResponseFrame } from "./agents";
// Close codes of any connection.
export {
  CLOSE_DESTROYED,
  CLOSE_INTERNAL_ERROR,
  RESERVED_CLOSE_CODES,
  CLOSE_REPLACED,
  CLOSE_INVALID_ID,
  CLOSE_NO_AGENT,
  CLOSE_OPEN_FAILED,
  CLOSE_NO_WEBSOCKETS,
} from "./close-codes";
// dokit's error frame.
export { DOKIT_ERROR } from "./dokit-error";
export type { DokitErrorFrame } from "./dokit-error";
// WebSockets' rate limit and heartbeat.
export { CLOSE_RATE_LIMITED } from "./rate-limit";
export { CLOSE_HEARTBEAT_TIMEOUT, HEARTBEAT_PING, HEARTBEAT_PONG } from "./heartbeat";
// The Cap'n Web transport.
export { TRANSPORT_PARAM, CAPNWEB, CLOSE_NO_TRANSPORT, CAPNWEB_PIPE } from "./capnweb";
// McpClients' servers frame.
export { MCP_SERVERS } from "./mcp-client";
export type { McpServersFrame, MCPConnectionState, MCPServer, MCPCatalogueItem, MCPServersState } from "./mcp-client";
// Presence.
export { PRESENCE } from "./presence";
export type { PresenceClientFrame, PresenceEntry, PresenceServerFrame } from "./presence";
// Rooms.
export {
  CLOSE_ROOM_DRAINED,
  CLOSE_ROOM_PUBLISH_FAILED,
  ROOM,
  ROOM_ACK,
  ROOM_EPOCH_PARAM,
  ROOM_GAP,
  ROOM_PUBLISH,
  ROOM_RESET,
  ROOM_SHARD_PARAM,
  ROOM_SINCE_PARAM,
  ROOM_WELCOME,
} from "./rooms";
export type { RoomAckFrame, RoomErrorFrame, RoomGapFrame, RoomMessageFrame, RoomPublishFrame, RoomResetFrame, RoomWelcomeFrame } from "./rooms";
// Streams' readers.
export {
  STREAM_READ,
  STREAM_CANCEL,
  STREAM_CHUNKS,
  STREAM_UP_TO_DATE,
  STREAM_END,
  STREAM_MORE,
} from "./streams";
export type {
  StreamWireChunk,
  StreamReadFrame,
  StreamCancelFrame,
  StreamChunksFrame,
  StreamUpToDateFrame,
  StreamEndFrame,
  StreamMoreFrame,
  StreamErrorFrame,
  StreamWireErrorCode,
} from "./streams";
// Sessions' live history.
export {
  SESSION,
  SESSION_FORBIDDEN,
  SESSION_REJECTED,
  SESSION_TOO_LARGE,
  MAX_WATCHED_SESSIONS,
  MAX_SESSION_ID_LENGTH,
  MAX_PAGE_BYTES,
  MAX_PAGE_MESSAGES,
  DEFAULT_PAGE_BYTES,
  DEFAULT_PAGE_MESSAGES,
} from "./sessions";
export type { SessionClientFrame, SessionErrorFrame, SessionServerFrame, WireMessage, WireSessionEvent } from "./sessions";
// Agent and binding names in URLs.
export { kebab } from "./kebab";
