// Scenario object for the rate limit over real sockets (rate-limit.test.ts).
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../src/lifecycle";
import { Presence } from "../src/presence";
import { RateLimit, WebSockets } from "../src/websockets";
import { evictRoute } from "./evict.route";

declare global {
  interface Env {
    RateLimitedRoom: DurableObjectNamespace<RateLimitedRoom>;
  }
}

/**
 * A burst of three messages, then one a second; closed after two drops in a row. Echoes what it
 * admits as `echo:<message>`, except `stats`, answered `stats:{"runs","count","listed"}`: how many
 * messages reached `onMessage` since the instance started, and how many connections are open.
 * With a Presence, so a closed connection's leave can be watched.
 */
export class RateLimitedRoom extends DurableObject<Env> {
  runs = 0;
  readonly webSockets: WebSockets = new WebSockets({
    rateLimit: new RateLimit({ messagesPerSecond: 1, burst: 3, closeAfter: 2 }),
    presence: new Presence(),
    handlers: {
      onMessage: (connection, message) => {
        if (message !== "stats") return void (this.runs++, connection.send(`echo:${String(message)}`));
        const stats = { runs: this.runs, count: this.webSockets.count(), listed: [...this.webSockets.getConnections()].length };
        connection.send(`stats:${JSON.stringify(stats)}`);
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}

/** `POST /evict-rate-limited/<name>` evicts that RateLimitedRoom (evict.route.ts); `undefined` for any other request. */
export function rateLimitedEvictRoute(request: Request, env: Env): Promise<Response | undefined> | undefined {
  const url = new URL(request.url);
  if (!url.pathname.startsWith("/evict-rate-limited/")) return undefined;
  url.pathname = url.pathname.replace("/evict-rate-limited/", "/evict/");
  return evictRoute(new Request(url, request), env.RateLimitedRoom);
}
