import type { DelegatingRoom, DisabledRoom, HostRoutedRoom, InspectedRoom, McpRoom, PresenceRoom, RefusingRoom, SweptRoom } from "./objects";
import type { YjsInspectedRoom } from "./objects-yjs";

declare global {
  interface Env {
    INSPECTED_ROOM: DurableObjectNamespace<InspectedRoom>;
    DISABLED_ROOM: DurableObjectNamespace<DisabledRoom>;
    REFUSING_ROOM: DurableObjectNamespace<RefusingRoom>;
    HOST_ROUTED_ROOM: DurableObjectNamespace<HostRoutedRoom>;
    DELEGATING_ROOM: DurableObjectNamespace<DelegatingRoom>;
    MCP_ROOM: DurableObjectNamespace<McpRoom>;
    PRESENCE_ROOM: DurableObjectNamespace<PresenceRoom>;
    SWEPT_ROOM: DurableObjectNamespace<SweptRoom>;
    YJS_INSPECTED_ROOM: DurableObjectNamespace<YjsInspectedRoom>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
