import type { AsyncSchemaStore, ManualPresence, PlainStore, SyncedBoard } from "./objects";

declare global {
  interface Env {
    STATE_SYNCED: DurableObjectNamespace<SyncedBoard>;
    STATE_MANUAL: DurableObjectNamespace<ManualPresence>;
    STATE_PLAIN: DurableObjectNamespace<PlainStore>;
    STATE_ASYNC: DurableObjectNamespace<AsyncSchemaStore>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
