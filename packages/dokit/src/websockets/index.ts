export { WebSockets } from "./websockets";
export { coalesceBroadcasts } from "./coalesce";
export type { Coalescing } from "./coalesce";
export { HeartbeatSweep } from "./heartbeat-sweep";
export type { HeartbeatSweepOptions } from "./heartbeat-sweep";
export { RateLimit } from "./rate-limit";
export type { RateLimitOptions } from "./rate-limit";
export type { BuiltDoor, ConnectionPlugin, PluginDoor } from "./plugin";
export type { ConnectionSlot, SlotOptions } from "../lifecycle/capability";
export type {
  BroadcastOptions,
  CapnwebTransport,
  HeartbeatOptions,
  HeartbeatSweeper,
  InboundLimit,
  PresenceTracker,
  WireServer,
  ConnectionDecision,
  Identity,
  SyncedState,
  TransportHost,
  WebSocketHandlers,
  WebSocketsOptions,
} from "./options";
export { ATTACHMENT_LIMIT } from "./attachment";
export { MAX_TAGS, MAX_TAG_LENGTH } from "./tags";
export type { Connection, ConnectionContext } from "../lifecycle/connection";
export type { WebSocketsErrorCode } from "./errors";
