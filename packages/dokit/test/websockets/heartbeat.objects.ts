import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";
import { HeartbeatSweep, WebSockets } from "../../src/websockets";

/** Instances built in this isolate (a wake builds one; a ping answered by the runtime none). */
let constructed = 0;

/** Answers pings with the default strings; the message `"constructed"` is answered with the count of instances built. */
export class WsHeartbeat extends DurableObject<Env> {
  readonly webSockets = new WebSockets({
    heartbeat: true,
    protocol: false,
    handlers: { onMessage: (connection, message) => connection.send(message === "constructed" ? String(constructed) : `echo:${String(message)}`) },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    constructed++;
  }
}

/** Custom ping strings and a sweep that closes sockets silent for more than 1 s. */
export class WsHeartbeatSweep extends DurableObject<Env> {
  readonly webSockets = new WebSockets({
    heartbeat: { ping: "hb?", pong: "hb!", sweep: new HeartbeatSweep({ timeoutMs: 1000 }) },
    protocol: false,
    handlers: { onMessage: (connection, message) => connection.send(`echo:${String(message)}`) },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}
