// Scenario objects for connect failures and teardown over real sockets
// (connect.test.ts). Each answers `GET …/sockets` with what the object holds,
// so a test can tell that a refused connection left no ghost behind.
import { DurableObject } from "cloudflare:workers";
import { Inspector } from "../src/inspector";
import { Lifecycle } from "../src/lifecycle";
import { Observability } from "../src/observability";
import { State } from "../src/state";
import { WebSockets } from "../src/websockets";

/** Answers the test routes every scenario object shares: `/sockets` and `/destroy`. */
async function testRoutes(request: Request, host: { webSockets: WebSockets; lifecycle: Lifecycle }) {
  const path = new URL(request.url).pathname;
  // `{ connections, sockets }`: dokit's open connections and every socket the runtime still lists.
  if (path.endsWith("/sockets")) {
    const connections = [...host.webSockets.getConnections()].length;
    return Response.json({ connections, sockets: host.lifecycle.ctx.getWebSockets().length });
  }
  if (path.endsWith("/destroy")) {
    await host.lifecycle.destroy();
    return new Response("destroyed");
  }
  return new Response("no route", { status: 404 });
}

/**
 * `onConnect` throws for `?fail=1` (after sending a frame of its own), `getConnectionTags`
 * returns an invalid tag for `?fail=tags`; other connections open normally.
 */
export class FaultyHost extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets({
    getConnectionTags: (_connection, ctx) => (new URL(ctx.request.url).searchParams.get("fail") === "tags" ? [""] : []),
    handlers: {
      onConnect(connection, ctx) {
        connection.send(JSON.stringify({ type: "welcome" }));
        if (new URL(ctx.request.url).searchParams.get("fail") === "1") throw new Error("secret detail: onConnect exploded");
      },
      onClose: () => void this.ctx.storage.kv.put("closed-handler-ran", true),
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);

  onRequest(request: Request): Promise<Response> {
    return testRoutes(request, this);
  }
}

/** State + WebSockets on a class bound without SQLite (`new_classes`): State cannot load. */
export class NoSqlHost extends DurableObject<Env> {
  readonly counter = new State({ initialState: { count: 0 } });
  readonly webSockets: WebSockets = new WebSockets({ state: this.counter });
  readonly lifecycle = Lifecycle.install(this).use(this.counter).use(this.webSockets);

  onRequest(request: Request): Promise<Response> {
    return testRoutes(request, this);
  }
}

/** A plain room: destroy, and closes started by either side. */
export class PlainRoom extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets({
    handlers: {
      onMessage: (connection, message) => {
        // "close <code>": the server closes this connection, inside a socket event.
        const match = typeof message === "string" && /^close (\d+)$/.exec(message);
        if (match) connection.close(Number(match[1]), "closed by server");
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this)
    .use(this.webSockets)
    // The default guard (loopback Host, same-site requests), met over real sockets in inspector.test.ts.
    .use(new Inspector({ enabled: true, observability: new Observability(), webSockets: this.webSockets }));

  onRequest(request: Request): Promise<Response> {
    return testRoutes(request, this);
  }
}
