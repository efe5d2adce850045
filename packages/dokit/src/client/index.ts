export { AgentClient } from "./client";
export { ClientPresence } from "./presence";
export type { PresenceChange, PresenceEntry } from "./presence";
export { ClientStreams, StreamReader, StreamReadError } from "./streams";
export type { ClientStreamChunk, ClientStreamReadOptions } from "./streams";
export { RoomMember } from "./room";
export { SessionView, SessionWriteError } from "./session";
export type { SessionViewClient, SessionViewMessage, SessionViewOptions } from "./session";
export type { RoomMemberOptions, RoomMessage } from "./room";
export { DEFAULT_CALL_TIMEOUT_MS } from "./calls";
export { DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_HEARTBEAT_TIMEOUT_MS } from "./heartbeat";
export { DEFAULT_MAX_QUEUED_BYTES, DEFAULT_MAX_QUEUED_MESSAGES } from "./outbox";
export { AgentConnectionError, AgentFrameError, isFinalCloseCode } from "./errors";
export { agentPath, socketUrl } from "./url";
export type { AgentClientMessage, BinaryType } from "./binary";
export type { AgentClientEventMap, ListenerOptions } from "./event-target";
export type {
  AgentCall,
  AgentClientOptions,
  AgentClientProperties,
  AgentClientStub,
  AgentStub,
  AgentTransport,
  CallableKeys,
  CallOptions,
  HeartbeatClientOptions,
  MethodArgs,
  MethodResult,
  QueryParams,
  StreamOptions,
  UntypedAgentStub,
} from "./types";
export type { MCPServersState } from "../protocol/mcp-client";
