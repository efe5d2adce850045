import { McpServer } from "@modelcontextprotocol/server";
import { channel } from "node:diagnostics_channel";
import { DurableObject, RpcTarget } from "cloudflare:workers";
import { Inspector, type InspectorOptions } from "../../src/inspector";
import { Lifecycle } from "../../src/lifecycle";
import { McpHandler } from "../../src/mcp";
import { Observability } from "../../src/observability";
import { Queue } from "../../src/queue";
import { Scheduler } from "../../src/schedule";
import { Tasks, type TaskStep } from "../../src/tasks";
import { State } from "../../src/state";
import { Presence } from "../../src/presence";
import { coalesceBroadcasts, HeartbeatSweep, WebSockets } from "../../src/websockets";

export type Count = { count: number };
const param = (request: Request, key: string) => new URL(request.url).searchParams.get(key);

/** The client's methods: one rpc that changes the state. */
class Api extends RpcTarget {
  readonly #state: State<Count>;
  constructor(state: State<Count>) {
    super();
    this.#state = state;
  }
  increment(): number {
    return this.#state.set({ count: this.#state.get().count + 1 }).count;
  }
}

/** A room with State, WebSockets (tags from `?tags=a,b`, readonly for `?mode=view`) and an Inspector built from `options`. */
abstract class Room extends DurableObject<Env> {
  readonly counter = new State<Count>({ initialState: { count: 0 } });
  readonly webSockets: WebSockets = new WebSockets({
    state: this.counter,
    callables: new Api(this.counter),
    getConnectionTags: (_connection, ctx) => param(ctx.request, "tags")?.split(",") ?? [],
    readonly: (_connection, ctx) => param(ctx.request, "mode") === "view",
  });
  abstract readonly inspector: Inspector;

  /** Publishes an event on a channel from inside the object (as the events facility does). */
  async publish(name: string, event: Record<string, unknown>): Promise<void> {
    channel(name).publish(event);
  }

  /** @returns the ids `getConnections()` lists */
  async connectionIds(): Promise<string[]> {
    return [...this.webSockets.getConnections()].map((connection) => connection.id);
  }

  /** Broadcasts a text message to every connection. */
  async broadcast(text: string): Promise<void> {
    this.webSockets.broadcast(text);
  }
}

const inspector = (room: Room, options: InspectorOptions) => new Inspector({ webSockets: room.webSockets, state: room.counter, ...options });

/** Enabled, default guard (localhost only), with a Scheduler, a Queue and Tasks to list. */
export class InspectedRoom extends Room {
  readonly scheduler = new Scheduler({ callbacks: { remind: () => {} } });
  readonly queue = new Queue({ callbacks: { send: () => {} } });
  readonly tasks = new Tasks({
    definitions: {
      approve: async (_: null, step: TaskStep) => {
        await step.do("ask", () => "asked");
        return step.waitForEvent("answer", { type: "approved" });
      },
    },
  });
  readonly inspector = inspector(this, { enabled: true, observability: new Observability(), scheduler: this.scheduler, queue: this.queue, tasks: this.tasks });
  readonly lifecycle = Lifecycle.install(this).use(this.counter).use(this.webSockets).use(this.scheduler).use(this.queue).use(this.tasks).use(this.inspector);

  /** Schedules a reminder an hour from now, and starts a run that waits for an event, for the snapshot to list. */
  async addReminder(): Promise<void> {
    await this.lifecycle.start();
    await this.scheduler.set(3600, "remind", { text: "later" });
    const { runId } = await this.tasks.run("approve", null, { runId: "approval" });
    for (let i = 0; i < 200 && (await this.tasks.get(runId))?.state !== "waiting"; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Installed but not enabled. */
export class DisabledRoom extends Room {
  readonly inspector = inspector(this, {});
  readonly lifecycle = Lifecycle.install(this).use(this.counter).use(this.webSockets).use(this.inspector);
}

/** Enabled, with an authorize hook that refuses everyone. */
export class RefusingRoom extends Room {
  readonly inspector = inspector(this, { enabled: true, authorize: () => false });
  readonly lifecycle = Lifecycle.install(this).use(this.counter).use(this.webSockets).use(this.inspector);
}

/** Refusing, on a host with its own onRequest for unclaimed paths, at a custom path. */
export class HostRoutedRoom extends Room {
  readonly inspector = inspector(this, {
    enabled: true,
    path: "/debug",
    authorize: (request) => {
      if (request.headers.get("x-debug") === "throw") throw new Error("hook broke");
      return request.headers.get("x-debug") === "yes";
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.counter).use(this.webSockets).use(this.inspector);

  onRequest(request: Request): Response {
    return new Response(`host's own answer to ${new URL(request.url).pathname}`, { status: 418 });
  }
}

/** Refusing, on a host that delegates fetch and answers unclaimed paths itself. */
export class DelegatingRoom extends Room {
  readonly inspector = inspector(this, { enabled: true, authorize: () => false });
  readonly lifecycle = Lifecycle.install(this, { delegates: ["fetch"] }).use(this.counter).use(this.webSockets).use(this.inspector);

  override async fetch(request: Request): Promise<Response> {
    return (await this.lifecycle.fetch(request)) ?? new Response("the delegating host's fallback", { status: 404 });
  }
}

/** An MCP server object, with an MCP client capability's shape given by hand (its servers() is all the Inspector reads). */
export class McpRoom extends Room {
  readonly mcp = new McpHandler({ server: () => new McpServer({ name: "inspected", version: "1.0.0" }) });
  readonly clients = {
    servers: () => ({ "srv-1": { name: "calendar", state: "ready" } }),
    keepsAwake: () => ["MCP server srv-1 (https://calendar.test/mcp): notification stream open, closes after 30000 ms without use"],
  };
  /** A section that cannot be read: the page shows its message. */
  readonly brokenQueue = { list: async (): Promise<unknown[]> => { throw new Error("queue table is locked"); } };
  readonly inspector = inspector(this, { enabled: true, mcp: this.mcp, mcpClients: this.clients, queue: this.brokenQueue });
  readonly lifecycle = Lifecycle.install(this).use(this.counter).use(this.mcp).use(this.webSockets).use(this.inspector);
}

/** Presence and coalesced broadcasts on a one-second tick, so a snapshot taken right after a change sees it waiting. */
export class PresenceRoom extends DurableObject<Env> {
  readonly presence = new Presence({ tickMs: 1000 });
  readonly webSockets: WebSockets = new WebSockets({
    presence: this.presence,
    coalescing: coalesceBroadcasts({ tickMs: 1000 }),
    handlers: { onMessage: (_connection, message) => this.webSockets.broadcast(String(message), { coalesce: "latest" }) },
  });
  readonly inspector = new Inspector({ enabled: true, webSockets: this.webSockets, presence: this.presence });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets).use(this.inspector);
}

/** A heartbeat sweep of one minute, shown by the Inspector once a socket arms it. */
export class SweptRoom extends DurableObject<Env> {
  readonly sweep = new HeartbeatSweep({ timeoutMs: 60_000 });
  readonly webSockets: WebSockets = new WebSockets({ heartbeat: { sweep: this.sweep } });
  readonly inspector = new Inspector({ enabled: true, webSockets: this.webSockets, heartbeatSweep: this.sweep });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets).use(this.inspector);
}
