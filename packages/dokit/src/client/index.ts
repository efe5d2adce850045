export { AgentClient } from "./client";
export { DEFAULT_CALL_TIMEOUT_MS } from "./calls";
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
  MethodArgs,
  MethodResult,
  QueryParams,
  StreamOptions,
  UntypedAgentStub,
} from "./types";
export type { MCPServersState } from "../protocol/frames";
