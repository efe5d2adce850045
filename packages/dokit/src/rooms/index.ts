export { RoomShard } from "./shard";
export type { RoomShardOptions } from "./shard";
export { RoomSequencer } from "./sequencer";
export type { RoomSequencerOptions } from "./sequencer";
export { publishToRoom, routeRoomRequest } from "./router";
export type { PublishToRoomOptions, RoomRouteOptions } from "./router";
export type { RoomPublishOptions } from "./publish-filters";
export type { Fanout } from "./fanout";
export type { DeliveryHook } from "./deliver";
export { RoomRelay } from "./relay";
export type { RoomRelayOptions } from "./relay";
export type { RoomsErrorCode } from "./errors";
export { parseShardName, shardName } from "./names";
export type {
  RoomAckFrame,
  RoomCountFrame,
  RoomErrorFrame,
  RoomGapFrame,
  RoomMessageFrame,
  RoomPublishFrame,
  RoomResetFrame,
  RoomWelcomeFrame,
} from "../protocol/rooms";
