import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";
import { RateLimit, WebSockets } from "../../src/websockets";

/** At most one message a second after a burst of three, and 64 bytes a second; closed after three drops in a row. Echoes what it admits. */
export class WsRateLimited extends DurableObject<Env> {
  readonly webSockets = new WebSockets({
    rateLimit: new RateLimit({ messagesPerSecond: 1, burst: 3, bytesPerSecond: 64, closeAfter: 3 }),
    protocol: false,
    handlers: { onMessage: (connection, message) => connection.send(`echo:${String(message)}`) },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}
