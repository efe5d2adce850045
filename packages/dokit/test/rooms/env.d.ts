import type { FaultySequencer, RoomChat, RoomChatFaulty, RoomChatTree, TestRelay, TreeSequencer, RoomChatSlowBatch, RoomChatSlowMemory, RoomChatSmallLog, SmallLogSequencer, TestSequencer } from "./objects";
import type { PartsSequencer, PresenceSequencer, RoomPresenceChat, RoomPresenceParts, RoomPresenceTree } from "./presence.objects";

declare global {
  interface Env {
    ROOM_CHAT: DurableObjectNamespace<RoomChat>;
    ROOM_SEQUENCER: DurableObjectNamespace<TestSequencer>;
    ROOM_CHAT_SMALL: DurableObjectNamespace<RoomChatSmallLog>;
    SMALL_SEQUENCER: DurableObjectNamespace<SmallLogSequencer>;
    ROOM_CHAT_SLOW: DurableObjectNamespace<RoomChatSlowBatch>;
    ROOM_CHAT_SLOW_MEMORY: DurableObjectNamespace<RoomChatSlowMemory>;
    ROOM_CHAT_FAULTY: DurableObjectNamespace<RoomChatFaulty>;
    FAULTY_SEQUENCER: DurableObjectNamespace<FaultySequencer>;
    ROOM_CHAT_TREE: DurableObjectNamespace<RoomChatTree>;
    TREE_SEQUENCER: DurableObjectNamespace<TreeSequencer>;
    TEST_RELAY: DurableObjectNamespace<TestRelay>;
    ROOM_PRESENCE_CHAT: DurableObjectNamespace<RoomPresenceChat>;
    PRESENCE_SEQUENCER: DurableObjectNamespace<PresenceSequencer>;
    ROOM_PRESENCE_TREE: DurableObjectNamespace<RoomPresenceTree>;
    ROOM_PRESENCE_PARTS: DurableObjectNamespace<RoomPresenceParts>;
    PARTS_SEQUENCER: DurableObjectNamespace<PartsSequencer>;
  }
}
