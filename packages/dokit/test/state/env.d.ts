import type { AsyncSchemaStore, AutoBoard, KvOnlyStore, ManualPresence, PlainStore, SyncedBoard, WakeConflict, WakeEager, WakeNotes, WakeRoom, WakeUndeclared, WakeVarying } from "./objects";

declare global {
  interface Env {
    STATE_SYNCED: DurableObjectNamespace<SyncedBoard>;
    STATE_MANUAL: DurableObjectNamespace<ManualPresence>;
    STATE_PLAIN: DurableObjectNamespace<PlainStore>;
    STATE_ASYNC: DurableObjectNamespace<AsyncSchemaStore>;
    STATE_KV_ONLY: DurableObjectNamespace<KvOnlyStore>;
    WAKE_ROOM: DurableObjectNamespace<WakeRoom>;
    WAKE_EAGER: DurableObjectNamespace<WakeEager>;
    WAKE_VARYING: DurableObjectNamespace<WakeVarying>;
    WAKE_CONFLICT: DurableObjectNamespace<WakeConflict>;
    STATE_AUTO: DurableObjectNamespace<AutoBoard>;
    WAKE_NOTES: DurableObjectNamespace<WakeNotes>;
    WAKE_UNDECLARED: DurableObjectNamespace<WakeUndeclared>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
