// The `heartbeat` option as a plug-in of the door (plugin.ts): it has the runtime answer clients'
// pings and arms the sweep, if any, when a socket is accepted. Like the rate limit, it uses only the
// door's public interface (no internal of this folder), as a plug-in of your own would.
import { type Wakeable, WORKS_UNATTACHED } from "../lifecycle/wake";
import { HEARTBEAT_PING, HEARTBEAT_PONG } from "../protocol/heartbeat";
import type { HeartbeatOptions } from "./options";
import type { ConnectionPlugin } from "./plugin";

/** @returns the plug-in of the `heartbeat` option (`true`, or its ping, pong and sweep): the runtime's ping answer and the sweep */
export function heartbeat(options: true | HeartbeatOptions): ConnectionPlugin {
  const { ping = HEARTBEAT_PING, pong = HEARTBEAT_PONG, sweep } = options === true ? {} : options;
  let ctx: DurableObjectState | undefined;
  /** Set once this instance has configured the runtime's ping answer. */
  let answering = false;
  return {
    pluginName: "heartbeat",
    plug(door) {
      ctx = door.claims.lifecycle.ctx;
      if (!sweep) return;
      door.claims.use(sweep);
      // A swept socket whose client never answers sends no close event: it is ended here at once.
      sweep.onSwept?.((ws) => door.closed(ws));
    },
    /**
     * Has the runtime answer the ping with the pong itself, without waking the object, and arms the
     * sweep. The answer belongs to the object's socket manager, which outlives a hibernation while
     * sockets are open (tested with evictDurableObject), so it is set when a socket is accepted, once
     * per instance, never on the wake path.
     */
    accepted() {
      if (!answering && ctx) {
        ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(ping, pong));
        answering = true;
      }
      return sweep?.accepted();
    },
    // Its hooks run only on an upgrade, which wires the object: it leaves wakes to socket events unwired.
    [WORKS_UNATTACHED]: true,
  } as ConnectionPlugin & Wakeable;
}
