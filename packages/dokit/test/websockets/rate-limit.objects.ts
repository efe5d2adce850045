import { DurableObject } from "cloudflare:workers";
import type { Claims } from "../../src/lifecycle";
import { Lifecycle } from "../../src/lifecycle";
import { RateLimit, WebSockets } from "../../src/websockets";

/** At most one message a second after a burst of three, and 64 bytes a second; closed after three drops in a row. Echoes what it admits. */
export class WsRateLimited extends DurableObject<Env> {
  /** Attaches of the WebSockets in this instance (this wake): 0 while the object waits to be wired. */
  attached = 0;
  readonly webSockets = new CountedSockets({
    rateLimit: new RateLimit({ messagesPerSecond: 1, burst: 3, bytesPerSecond: 64, closeAfter: 3 }),
    protocol: false,
    handlers: { onMessage: (connection, message) => connection.send(`echo:${String(message)}`) },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);

  /** @returns how often this instance attached its WebSockets */
  report(): { attached: number } {
    return { attached: this.attached };
  }
}

/** Counts its attaches on the host, to show which wakes wire the object's capabilities. */
class CountedSockets extends WebSockets {
  override attach(claims: Claims): void {
    (claims.lifecycle.host as { attached: number }).attached++;
    super.attach(claims);
  }
}
