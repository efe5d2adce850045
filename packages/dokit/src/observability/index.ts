export { includeValues, Observability, subscribe } from "./observability";
export { CHANNELS } from "./channels";
export type {
  BaseEvent,
  ChannelEventMap,
  ErrorWhere,
  LifecycleEvent,
  McpClientEvent,
  McpEvent,
  MessageEvent,
  ObservabilityEvent,
  RpcEvent,
  ScheduleEvent,
  TaskEvent,
  StateEvent,
  StateEventSource,
} from "./events";
export type { Observer } from "../lifecycle/capability";
export type { EventChannelKey } from "./channels";
export type { ObservabilityErrorCode } from "./errors";
