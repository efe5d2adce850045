// Scenario object for the presence client over real sockets (presence-client.test.ts).
import { DurableObject } from "cloudflare:workers";
import { capnweb } from "../src/capnweb";
import { Lifecycle } from "../src/lifecycle";
import { Presence } from "../src/presence";
import { State } from "../src/state";
import { type Connection, WebSockets } from "../src/websockets";
import { evictRoute } from "./evict.route";

declare global {
  interface Env {
    PresenceClientRoom: DurableObjectNamespace<PresenceClientRoom>;
    PresenceClientSlowTick: DurableObjectNamespace<PresenceClientSlowTick>;
  }
}

/** What the tests publish. */
export type Cursor = { name: string; x?: number };

/** Presence with a 128-byte bound and a required string `name`. */
function cursors(tickMs: number): Presence<Cursor> {
  return new Presence<Cursor>({
    maxBytes: 128,
    tickMs,
    validate: (value) => {
      if (typeof value?.name !== "string") throw new Error("a name is required");
    },
  });
}

/**
 * Text messages: `kick` closes the sender with 1012 (so its client reconnects), `list` answers
 * `list:<presence.list() as JSON>`, `buffered` answers `buffered:<{ connection id: bytes not yet
 * written to its socket (`bufferedAmount`, null where the runtime has none) }>`, `fill:<id>:<MiB>`
 * sends that connection that many MiB in 64 KiB text frames (a backlog of other traffic) and answers
 * `filled:<{ sent, buffered }>` (its `bufferedAmount` in the same event); anything else comes back as
 * `echo:<message>`.
 */
function handlers(presence: Presence<Cursor>, sockets: () => WebSockets) {
  return {
    onMessage: (connection: Connection, message: string | ArrayBuffer) => {
      if (message === "kick") return connection.close(1012, "kicked");
      if (message === "list") return connection.send(`list:${JSON.stringify(presence.list())}`);
      if (message === "buffered") {
        const buffered = Object.fromEntries([...sockets().getConnections()].map((open) => [open.id, open.bufferedAmount ?? null]));
        return connection.send(`buffered:${JSON.stringify(buffered)}`);
      }
      if (typeof message === "string" && message.startsWith("fill:")) {
        const [, id = "", mib = "0"] = message.split(":");
        const target = sockets().getConnection(id);
        const frame = "x".repeat(65_536);
        let sent = 0;
        for (let i = 0; target && i < Number(mib) * 16; i++, sent += frame.length) target.send(frame);
        return connection.send(`filled:${JSON.stringify({ sent, buffered: target?.bufferedAmount ?? null })}`);
      }
      connection.send(`echo:${String(message)}`);
    },
  };
}

/** Presence (`cursors`, a 16 ms tick) beside a synced State, on JSON and Cap'n Web sockets; messages as in `handlers`. */
export class PresenceClientRoom extends DurableObject<Env> {
  readonly board = new State<{ count: number }>({ initialState: { count: 0 } });
  readonly presence = cursors(16);
  readonly webSockets: WebSockets = new WebSockets({ state: this.board, presence: this.presence, handlers: handlers(this.presence, () => this.webSockets), capnweb });
  readonly lifecycle = Lifecycle.install(this).use(this.board).use(this.webSockets);
}

/** Presence with a 1 s tick, so a test can act inside one tick; messages as in `handlers`. */
export class PresenceClientSlowTick extends DurableObject<Env> {
  readonly presence = cursors(1000);
  readonly webSockets: WebSockets = new WebSockets({ presence: this.presence, handlers: handlers(this.presence, () => this.webSockets) });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}

/** Test-only: `POST /evict-presence-client/<name>` evicts that PresenceClientRoom (evict.route.ts). */
export function presenceClientEvictRoute(request: Request, env: Env): Promise<Response | undefined> | undefined {
  const url = new URL(request.url);
  if (!url.pathname.startsWith("/evict-presence-client/")) return undefined;
  url.pathname = url.pathname.replace("/evict-presence-client/", "/evict/");
  return evictRoute(new Request(url, request), env.PresenceClientRoom);
}
