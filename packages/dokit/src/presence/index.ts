export { Presence } from "./presence";
export type { Present, PresenceCheck, PresenceOptions } from "./presence";
export type { PresenceErrorCode } from "./errors";
export type { PresenceClientFrame, PresenceEntry, PresenceServerFrame } from "../protocol/frames";
