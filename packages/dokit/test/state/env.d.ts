import type { AsyncSchemaStore, KvOnlyStore, ManualPresence, PlainStore, SyncedBoard } from "./objects";

declare global {
  interface Env {
    STATE_SYNCED: DurableObjectNamespace<SyncedBoard>;
    STATE_MANUAL: DurableObjectNamespace<ManualPresence>;
    STATE_PLAIN: DurableObjectNamespace<PlainStore>;
    STATE_ASYNC: DurableObjectNamespace<AsyncSchemaStore>;
    STATE_KV_ONLY: DurableObjectNamespace<KvOnlyStore>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
