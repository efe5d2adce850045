export { Lifecycle } from "./lifecycle";
export type { EntryPoint, HostHooks, LifecycleOptions } from "./lifecycle";
export type {
  AlarmHook,
  Capability,
  Claims,
  ConnectFrameSource,
  DestroyHook,
  FrameHandler,
  RouteHandler,
  SocketOwner,
  StartHook,
  UpgradeHandler,
} from "./capability";
export type { Connection, ConnectionContext } from "./connection";
export { getCurrentAgent, runInContext } from "./context";
export type { CurrentAgent } from "./context";
export { DokitError, isDokitError } from "./errors";
export type { DokitErrorCode } from "./errors";
export type { Alarms } from "./alarms";
export type { FrameClaim } from "./dispatch";
