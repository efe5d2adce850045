// Scenario objects of heartbeat.test.ts.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../src/lifecycle";
import { WebSockets } from "../src/websockets";

/** Answers dokit's pings from the runtime and echoes every ordinary text message as `echo:<text>`. */
export class HeartbeatRoom extends DurableObject<Env> {
  readonly webSockets = new WebSockets({
    heartbeat: true,
    handlers: { onMessage: (connection, message) => connection.send(`echo:${String(message)}`) },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}
