export { Presence, PRESENCE_LAG_BYTES } from "./presence";
export type { Present, PresenceCheck, PresenceLink, PresenceOptions } from "./presence";
export type { PresenceErrorCode } from "./errors";
export type { PresenceClientFrame, PresenceEntry, PresenceServerFrame } from "../protocol/presence";
