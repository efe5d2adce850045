export { Lifecycle } from "./lifecycle";
export type { EntryPoint, HostHooks, LifecycleOptions } from "./options";
export type {
  AlarmHook,
  AlarmRunner,
  CallableSource,
  Capability,
  Claims,
  ConnectFrameSource,
  DestroyHook,
  Dispatch,
  FrameClaim,
  FrameContext,
  FrameHandler,
  FrameOptions,
  ProtocolFrame,
  RouteHandler,
  SocketOwner,
  StartHook,
  UpgradeHandler,
} from "./capability";
export type { Connection, ConnectionContext } from "./connection";
export { getCurrentAgent } from "./current";
export type { CurrentAgent } from "./context";
export { DokitError, isDokitError, Refusal } from "./errors";
export type { LifecycleErrorCode } from "./errors";
export { claimAlarm } from "./alarms";
export type { AlarmWork } from "./alarms";
