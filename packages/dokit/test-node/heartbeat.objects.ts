// Scenario objects of heartbeat.test.ts.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../src/lifecycle";
import { HeartbeatSweep, WebSockets } from "../src/websockets";

/** Answers dokit's pings from the runtime and echoes every ordinary text message as `echo:<text>`. */
export class HeartbeatRoom extends DurableObject<Env> {
  readonly webSockets = new WebSockets({
    heartbeat: true,
    handlers: { onMessage: (connection, message) => connection.send(`echo:${String(message)}`) },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}

/** Closes sockets whose last ping is over 1 s old; echoes like HeartbeatRoom. */
export class HeartbeatSweptRoom extends DurableObject<Env> {
  readonly webSockets = new WebSockets({
    heartbeat: { sweep: new HeartbeatSweep({ timeoutMs: 1000 }) },
    handlers: { onMessage: (connection, message) => connection.send(`echo:${String(message)}`) },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}
