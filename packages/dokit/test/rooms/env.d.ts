import type { RoomChat, RoomChatSlowBatch, RoomChatSlowMemory, RoomChatSmallLog, SmallLogSequencer, TestSequencer } from "./objects";

declare global {
  interface Env {
    ROOM_CHAT: DurableObjectNamespace<RoomChat>;
    ROOM_SEQUENCER: DurableObjectNamespace<TestSequencer>;
    ROOM_CHAT_SMALL: DurableObjectNamespace<RoomChatSmallLog>;
    SMALL_SEQUENCER: DurableObjectNamespace<SmallLogSequencer>;
    ROOM_CHAT_SLOW: DurableObjectNamespace<RoomChatSlowBatch>;
    ROOM_CHAT_SLOW_MEMORY: DurableObjectNamespace<RoomChatSlowMemory>;
  }
}
