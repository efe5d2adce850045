export { Lifecycle } from "./lifecycle";
export type { EntryPoint, HostHooks, LifecycleOptions } from "./lifecycle";
export type {
  AlarmHook,
  AlarmRunner,
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
export { claimAlarm } from "./alarms";
export type { AlarmWork } from "./alarms";
export type { FrameClaim } from "./dispatch";
