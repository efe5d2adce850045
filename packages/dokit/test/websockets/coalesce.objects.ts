import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";
import { coalesceBroadcasts, WebSockets } from "../../src/websockets";

/** Instances built in this isolate (a wake after an eviction builds one). */
let constructed = 0;

/** A burst a client asks for: `count` coalesced broadcasts of `{ key, seq }` under `key`, with the last call's `except`/`tag`. */
type Burst = { key: string; count: number; except?: string; tag?: string; first?: { except?: string; tag?: string } };

/**
 * Coalesced broadcasts on a 50 ms tick. A client sends a burst as JSON (sent in one synchronous
 * loop, so it falls in one tick), or `"constructed"` for the count of instances built.
 */
export class WsCoalesce extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets({
    protocol: false,
    coalescing: coalesceBroadcasts(),
    getConnectionTags: (_connection, ctx) => new URL(ctx.request.url).searchParams.getAll("tag"),
    handlers: {
      onMessage: (connection, message) => {
        if (message === "constructed") return connection.send(String(constructed));
        const bursts = JSON.parse(String(message)) as Burst[];
        for (const { key, count, except, tag, first } of bursts) {
          for (let seq = 0; seq < count; seq++) {
            const options = seq === count - 1 ? { except, tag } : (first ?? {});
            this.webSockets.broadcast({ key, seq }, { ...options, coalesce: key });
          }
        }
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    constructed++;
  }
}
