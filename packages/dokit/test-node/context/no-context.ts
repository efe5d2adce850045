// A room as a Worker without getCurrentAgent() writes it: WebSockets with handlers and
// callables, State, routing. Nothing in it imports getCurrentAgent(), so dokit enters no
// context for its events.
import { DurableObject, RpcTarget } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";
import { routeAgentRequest } from "../../src/routing";
import { State } from "../../src/state";
import { WebSockets } from "../../src/websockets";
import { evictRoute } from "../evict.route";

class PlainCallables extends RpcTarget {
  echo(value: unknown): unknown {
    return value;
  }
  async later(value: string): Promise<string> {
    await scheduler.wait(1);
    return `later ${value}`;
  }
  fail(): never {
    throw new Error("refused on purpose");
  }
}

export class Plain extends DurableObject {
  readonly state = new State({ initialState: { count: 0 } });
  readonly webSockets: WebSockets = new WebSockets({
    state: this.state,
    callables: new PlainCallables(),
    handlers: {
      onConnect: (connection) => connection.send(`hello ${connection.id}`),
      onMessage: async (connection, message) => {
        if (message === "async") {
          await scheduler.wait(1);
          connection.send("after await");
        } else if (message === "throw") {
          throw new Error("handler failed on purpose");
        } else connection.send(`echo ${String(message)}`);
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.state).use(this.webSockets);
}

export default {
  async fetch(request: Request, env: { Plain: DurableObjectNamespace<Plain> } & Record<string, unknown>): Promise<Response> {
    // Test-only: POST /evict/<name> evicts that Plain object (../evict.route.ts).
    return (await evictRoute(request, env.Plain)) ?? (await routeAgentRequest(request, env)) ?? new Response("no route", { status: 404 });
  },
};
