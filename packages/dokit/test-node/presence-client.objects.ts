// Scenario object for the presence client over real sockets (presence-client.test.ts).
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../src/lifecycle";
import { Presence } from "../src/presence";
import { State } from "../src/state";
import { WebSockets } from "../src/websockets";
import { evictRoute } from "./evict.route";

declare global {
  interface Env {
    PresenceClientRoom: DurableObjectNamespace<PresenceClientRoom>;
  }
}

/** What the tests publish. */
export type Cursor = { name: string; x?: number };

/**
 * Presence with a 128-byte bound, a required string `name` and a short tick, beside a synced
 * State. Text messages: `kick` closes the sender with 1012 (so its client reconnects);
 * anything else comes back as `echo:<message>`.
 */
export class PresenceClientRoom extends DurableObject<Env> {
  readonly board = new State<{ count: number }>({ initialState: { count: 0 } });
  readonly presence = new Presence<Cursor>({
    maxBytes: 128,
    tickMs: 16,
    validate: (value) => {
      if (typeof value?.name !== "string") throw new Error("a name is required");
    },
  });
  readonly webSockets: WebSockets = new WebSockets({
    state: this.board,
    presence: this.presence,
    handlers: {
      onMessage: (connection, message) => {
        if (message === "kick") return connection.close(1012, "kicked");
        connection.send(`echo:${String(message)}`);
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.board).use(this.webSockets);
}

/** Test-only: `POST /evict-presence-client/<name>` evicts that PresenceClientRoom (evict.route.ts). */
export function presenceClientEvictRoute(request: Request, env: Env): Promise<Response | undefined> | undefined {
  const url = new URL(request.url);
  if (!url.pathname.startsWith("/evict-presence-client/")) return undefined;
  url.pathname = url.pathname.replace("/evict-presence-client/", "/evict/");
  return evictRoute(new Request(url, request), env.PresenceClientRoom);
}
