import type { WsCoalesce } from "./coalesce.objects";
import type { WsRateLimited } from "./rate-limit.objects";
import type { WsPresence } from "./presence.objects";
import type { WsVotes } from "./plugin.objects";
import type { WsHeartbeat, WsHeartbeatSweep } from "./heartbeat.objects";
import type { WsBare, WsFailingConnect, WsManual, WsMixedHost, WsPlain, WsRoom } from "./objects";

declare global {
  interface Env {
    WS_ROOM: DurableObjectNamespace<WsRoom>;
    WS_BARE: DurableObjectNamespace<WsBare>;
    WS_PLAIN: DurableObjectNamespace<WsPlain>;
    WS_HEARTBEAT: DurableObjectNamespace<WsHeartbeat>;
    WS_COALESCE: DurableObjectNamespace<WsCoalesce>;
    WS_HEARTBEAT_SWEEP: DurableObjectNamespace<WsHeartbeatSweep>;
    WS_MANUAL: DurableObjectNamespace<WsManual>;
    WS_FAILING: DurableObjectNamespace<WsFailingConnect>;
    WS_MIXED: DurableObjectNamespace<WsMixedHost>;
    WS_RATE_LIMITED: DurableObjectNamespace<WsRateLimited>;
    WS_PRESENCE: DurableObjectNamespace<WsPresence>;
    WS_VOTES: DurableObjectNamespace<WsVotes>;
  }
}
