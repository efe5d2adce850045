// The minimal workers the bundle guard and `pnpm bench`'s bundle table build (build.ts):
// one per dokit subpath, the combinations that have size ceilings, and the outside code
// they are compared with.
import type { BundleCase } from "./build.ts";

// Shared preamble: every case is a worker module with a Durable Object class.
const DO = `import { DurableObject } from "cloudflare:workers";\n`;
export const WORKER = `export default { fetch: () => new Response("ok") };\n`;

/** The minimal dokit workers: one per subpath, and the combinations that have size ceilings (bundle.test.ts). */
export const DOKIT_CASES: BundleCase[] = [
  {
    name: "lifecycle",
    needs: ["lifecycle"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
export class Room extends DurableObject { lifecycle = Lifecycle.install(this); }
${WORKER}`,
  },
  {
    name: "lifecycle + websockets",
    needs: ["lifecycle", "websockets"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
export class Room extends DurableObject {
  webSockets = new WebSockets({ handlers: { onMessage: (c, m) => c.send(m) } });
  lifecycle = Lifecycle.install(this).use(this.webSockets);
}
${WORKER}`,
  },
  {
    name: "lifecycle + websockets + getCurrentAgent",
    needs: ["lifecycle", "websockets"],
    source: `${DO}import { getCurrentAgent, Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
export class Room extends DurableObject {
  webSockets = new WebSockets({ handlers: { onMessage: (c, m) => c.send(getCurrentAgent().connection === c ? m : "") } });
  lifecycle = Lifecycle.install(this).use(this.webSockets);
}
${WORKER}`,
  },
  {
    name: "lifecycle + websockets, callables short form",
    needs: ["lifecycle", "websockets"],
    source: `${DO}import { RpcTarget } from "cloudflare:workers";
import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
class Api extends RpcTarget { echo(x) { return x; } }
export class Room extends DurableObject {
  webSockets = new WebSockets({ callables: new Api(), handlers: { onMessage: (c, m) => c.send(m) } });
  lifecycle = Lifecycle.install(this).use(this.webSockets);
}
${WORKER}`,
  },
  {
    name: "lifecycle + websockets + presence",
    needs: ["lifecycle", "websockets", "presence"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
import { Presence } from "dokit/presence";
export class Room extends DurableObject {
  presence = new Presence();
  webSockets = new WebSockets({ presence: this.presence, handlers: { onMessage: (c, m) => c.send(m) } });
  lifecycle = Lifecycle.install(this).use(this.webSockets);
}
${WORKER}`,
  },
  {
    name: "lifecycle + sessions",
    needs: ["lifecycle", "sessions"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { Sessions } from "dokit/sessions";
export class Room extends DurableObject {
  sessions = new Sessions();
  lifecycle = Lifecycle.install(this).use(this.sessions);
  async add(text) { return this.sessions.session().appendMessage({ id: crypto.randomUUID(), role: "user", parts: [{ type: "text", text }] }); }
}
${WORKER}`,
  },
  {
    name: "lifecycle + websockets + yjs",
    needs: ["lifecycle", "websockets", "yjs"],
    // yjs itself is the application's (an optional peer, about 25 KB gzip): the case weighs what dokit adds.
    external: ["yjs"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
import { YjsDocument } from "dokit/yjs";
export class Room extends DurableObject {
  doc = new YjsDocument();
  webSockets = new WebSockets({ yjs: this.doc });
  lifecycle = Lifecycle.install(this).use(this.webSockets);
}
${WORKER}`,
  },
  {
    name: "lifecycle + callables",
    needs: ["lifecycle", "callables"],
    source: `${DO}import { RpcTarget } from "cloudflare:workers";
import { Lifecycle } from "dokit/lifecycle";
import { Callables } from "dokit/callables";
class Api extends RpcTarget { echo(x) { return x; } }
export class Room extends DurableObject { lifecycle = Lifecycle.install(this).use(new Callables(new Api())); }
${WORKER}`,
  },
  {
    name: "lifecycle + state",
    needs: ["lifecycle", "state"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { State } from "dokit/state";
export class Room extends DurableObject {
  state = new State({ initialState: { count: 0 }, validate: (s) => { if (typeof s.count !== "number") throw new Error("count"); } });
  lifecycle = Lifecycle.install(this).use(this.state);
}
${WORKER}`,
  },
  {
    name: "lifecycle + state + zod schema",
    needs: ["lifecycle", "state"],
    source: `${DO}import { z } from "zod";
import { Lifecycle } from "dokit/lifecycle";
import { State } from "dokit/state";
export class Room extends DurableObject {
  state = new State({ initialState: { count: 0 }, validate: z.object({ count: z.number() }) });
  lifecycle = Lifecycle.install(this).use(this.state);
}
${WORKER}`,
  },
  {
    name: "lifecycle + websockets + state + callables",
    needs: ["lifecycle", "websockets", "state", "callables"],
    source: `${DO}import { RpcTarget } from "cloudflare:workers";
import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
import { Callables } from "dokit/callables";
import { State } from "dokit/state";
class Api extends RpcTarget { echo(x) { return x; } }
export class Room extends DurableObject {
  state = new State({ initialState: { count: 0 } });
  webSockets = new WebSockets({ state: this.state, callables: new Callables(new Api()), handlers: { onMessage: (c, m) => c.send(m) } });
  lifecycle = Lifecycle.install(this).use(this.state).use(this.webSockets);
}
${WORKER}`,
  },
  {
    name: "lifecycle + websockets + capnweb",
    needs: ["lifecycle", "websockets", "capnweb"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
import { capnweb } from "dokit/capnweb";
export class Room extends DurableObject {
  webSockets = new WebSockets({ capnweb, handlers: { onMessage: (c, m) => c.send(m) } });
  lifecycle = Lifecycle.install(this).use(this.webSockets);
}
${WORKER}`,
  },
  {
    name: "lifecycle + schedule",
    needs: ["lifecycle", "schedule"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { Scheduler } from "dokit/schedule";
export class Room extends DurableObject {
  scheduler = new Scheduler({ callbacks: { remind: (p) => console.log(p) } });
  lifecycle = Lifecycle.install(this).use(this.scheduler);
}
${WORKER}`,
  },
  {
    name: "lifecycle + queue",
    needs: ["lifecycle", "queue"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { Queue } from "dokit/queue";
export class Room extends DurableObject {
  queue = new Queue({ callbacks: { send: (p) => console.log(p) } });
  lifecycle = Lifecycle.install(this).use(this.queue);
}
${WORKER}`,
  },
  {
    // dokit/inspector imported, never installed: the import must add nothing (tree-shaken).
    name: "lifecycle + websockets, inspector imported but not installed",
    needs: ["lifecycle", "websockets", "inspector"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
import { Inspector } from "dokit/inspector";
export class Room extends DurableObject {
  webSockets = new WebSockets({ handlers: { onMessage: (c, m) => c.send(m) } });
  lifecycle = Lifecycle.install(this).use(this.webSockets);
}
${WORKER}`,
  },
  {
    name: "lifecycle + websockets + inspector",
    needs: ["lifecycle", "websockets", "inspector"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
import { Inspector } from "dokit/inspector";
export class Room extends DurableObject {
  webSockets = new WebSockets({ handlers: { onMessage: (c, m) => c.send(m) } });
  inspector = new Inspector({ enabled: true, webSockets: this.webSockets });
  lifecycle = Lifecycle.install(this).use(this.webSockets).use(this.inspector);
}
${WORKER}`,
  },
  {
    name: "routing",
    needs: ["routing"],
    source: `import { routeAgentRequest } from "dokit/routing";
export default { fetch: async (request, env) => (await routeAgentRequest(request, env)) ?? new Response("no route", { status: 404 }) };
`,
  },
  {
    name: "protocol",
    needs: ["protocol"],
    source: `import { kebab, isRpcRequest } from "dokit/protocol";
export default { fetch: (r) => new Response(kebab(r.url) + isRpcRequest({})) };
`,
  },
  {
    name: "mcp (one tool)",
    needs: ["lifecycle", "mcp"],
    source: `${DO}import { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { Lifecycle } from "dokit/lifecycle";
import { McpHandler } from "dokit/mcp";
export class Room extends DurableObject {
  mcp = new McpHandler({ server: () => {
    const server = new McpServer({ name: "bench", version: "1.0.0" });
    server.registerTool("add", { inputSchema: z.object({ a: z.number(), b: z.number() }) }, ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
    return server;
  } });
  lifecycle = Lifecycle.install(this).use(this.mcp);
}
${WORKER}`,
  },
  {
    name: "lifecycle + mcp-client",
    needs: ["lifecycle", "mcp-client"],
    source: `${DO}import { Lifecycle } from "dokit/lifecycle";
import { McpClients } from "dokit/mcp-client";
export class Room extends DurableObject {
  mcp = new McpClients({ name: "bench", version: "1.0.0" });
  lifecycle = Lifecycle.install(this).use(this.mcp);
  async tools() { await this.lifecycle.start(); return this.mcp.tools(); }
}
${WORKER}`,
  },
  {
    // capnweb is left out: the client loads it with import() only for transport: "capnweb",
    // so a splitting bundler puts it in its own chunk (about 15 KB gzip) that cf-websocket users never fetch.
    name: "client (browser, without the on-demand Cap'n Web chunk)",
    needs: ["client"],
    external: ["capnweb"],
    source: `import { AgentClient } from "dokit/client";
export const client = new AgentClient({ agent: "room", name: "a", host: "localhost" });
`,
  },
  {
    name: "react (browser, react itself and the on-demand Cap'n Web chunk external)",
    needs: ["react"],
    external: ["react", "capnweb"],
    source: `import { useAgent } from "dokit/react";
export function App() { return useAgent({ agent: "room", name: "a", host: "localhost" }); }
`,
  },
];

/** Outside code the dokit bundles are compared with: the reference's client and the MCP SDK's handler alone. */
export const REFERENCE_CASES: BundleCase[] = [
  {
    name: "official agents/client (browser)",
    needs: [],
    source: `import { AgentClient } from "agents/client";
export const client = new AgentClient({ agent: "room", name: "a", host: "localhost" });
`,
  },
  {
    name: "MCP SDK handler alone (one tool)",
    needs: [],
    source: `import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "bench", version: "1.0.0" });
  server.registerTool("add", { inputSchema: z.object({ a: z.number(), b: z.number() }) }, ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
  return server;
});
export default { fetch: (request) => handler.fetch(request) };
`,
  },
];
