export { WebSockets } from "./websockets";
export type {
  CapnwebTransport,
  ConnectionDecision,
  Identity,
  SyncedState,
  WebSocketHandlers,
  WebSocketsOptions,
} from "./websockets";
export { ATTACHMENT_LIMIT } from "./attachment";
export { MAX_TAGS, MAX_TAG_LENGTH } from "./tags";
export type { Connection, ConnectionContext } from "../lifecycle/connection";
export { Callables } from "../callables/callables";
