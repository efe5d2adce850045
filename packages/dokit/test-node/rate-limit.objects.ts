// Scenario object for the rate limit over real sockets (rate-limit.test.ts).
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../src/lifecycle";
import { RateLimit, WebSockets } from "../src/websockets";

declare global {
  interface Env {
    RateLimitedRoom: DurableObjectNamespace<RateLimitedRoom>;
  }
}

/** A burst of three messages, then one a second; closed after two drops in a row. Echoes what it admits as `echo:<message>`. */
export class RateLimitedRoom extends DurableObject<Env> {
  readonly webSockets = new WebSockets({
    rateLimit: new RateLimit({ messagesPerSecond: 1, burst: 3, closeAfter: 2 }),
    handlers: { onMessage: (connection, message) => connection.send(`echo:${String(message)}`) },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}
