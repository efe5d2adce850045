// A Worker whose only path to getCurrentAgent() is a dynamic import, to show what dokit
// documents for it: work already running when it loads sees no context, dokit warns once,
// and later events have the context.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle/lifecycle";
import { routeAgentRequest } from "../../src/routing";
import { WebSockets } from "../../src/websockets";

/** What dokit warned, sent to the client that asks (`warnings`). */
const warnings: string[] = [];
const warn = console.warn.bind(console);
console.warn = (...args: unknown[]) => {
  warnings.push(args.map(String).join(" "));
  warn(...args);
};

export class Late extends DurableObject {
  readonly webSockets: WebSockets = new WebSockets({
    handlers: {
      onMessage: async (connection, message) => {
        if (message === "warnings") return connection.send(JSON.stringify(warnings));
        const { currentConnection } = await import("./late");
        connection.send(`${String(message)}: ${currentConnection()}`);
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}

export default {
  async fetch(request: Request, env: Record<string, unknown>): Promise<Response> {
    return (await routeAgentRequest(request, env)) ?? new Response("no route", { status: 404 });
  },
};
