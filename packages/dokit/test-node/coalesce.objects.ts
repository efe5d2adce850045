// Scenario objects of coalesce.test.ts.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../src/lifecycle";
import { coalesceBroadcasts, WebSockets } from "../src/websockets";

/**
 * Cursors on a 100 ms tick: `move:<x>` broadcasts `{"x":<x>}` under the key `cursor` to everyone
 * else; `burst:<n>` broadcasts `{"x":0}` … `{"x":<n-1>}` under it in one invocation.
 */
export class CoalesceCursors extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets({
    protocol: false,
    coalescing: coalesceBroadcasts({ tickMs: 100 }),
    handlers: {
      onMessage: (connection, message) => {
        const [command, value] = String(message).split(":");
        const n = Number(value);
        if (command === "move") this.webSockets.broadcast({ x: n }, { coalesce: "cursor", except: connection });
        if (command === "burst") for (let x = 0; x < n; x++) this.webSockets.broadcast({ x }, { coalesce: "cursor", except: connection });
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}
