import type { RoomRelay } from "dokit/rooms";
import type { LiveSequencer, LiveShard } from "./live-shard";

declare global {
  interface Env {
    LiveShard: DurableObjectNamespace<LiveShard>;
    LiveSequencer: DurableObjectNamespace<LiveSequencer>;
    LiveRelay: DurableObjectNamespace<RoomRelay>;
  }
}
