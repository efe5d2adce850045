// Scenario servers for the Node-side client tests. RefAgent is built from the
// reference modules of npm `agents`; a dokit twin is added beside it when
// `dokit/websockets` lands. Both speak the same protocol to the same tests.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "agents/lifecycle";
import { State } from "agents/state";
import { WebSockets } from "agents/websockets";
import { capnweb } from "../src/capnweb";
import { Lifecycle as DokitLifecycle } from "../src/lifecycle";
import { routeAgentRequest } from "../src/routing";
import { State as DokitState } from "../src/state";
import { WebSockets as DokitWebSockets } from "../src/websockets";
import { ScenarioCallables } from "./worker.callables";
import { evictRoute } from "./evict.route";
import { authedRoute } from "./security-mcp.route";
import { roomsRoute } from "./rooms.route";
import { roomsPresenceRoute } from "./rooms-presence.objects";
import { userRefusalRoute } from "./refusal.objects";
import { idRoomEvictRoute } from "./security-websockets.objects";
import { presenceClientEvictRoute } from "./presence-client.objects";
import { rateLimitedEvictRoute } from "./rate-limit.objects";
import { yjsEvictRoute } from "./yjs.objects";
import { streamsEvictRoute } from "./streams.objects";
import { sessionsChatRoute } from "./sessions-client.objects";

export { Counter, ScenarioCallables } from "./worker.callables";
export { FaultyHost, NoSqlHost, PlainRoom } from "./connect.objects";
export { McpCopiedSdk, McpDefaults, McpSameOrigin } from "./mcp.objects";
export { McpAssistant } from "./mcp-client.objects";
export { McpBriefSessions, McpFewSessions, McpGuarded, McpUserSessions } from "./security-mcp.objects";
export { IdRoom, IdRoomQueries } from "./security-websockets.objects";
export { McpClientGuarded, McpDeployed } from "./security-mcp-client.objects";
export { JobsHost } from "./security-jobs.objects";
export { RefusalNoSockets, RefusalStartFails } from "./refusal.objects";
export { McpIdleDefault, McpIdleNever, McpIdleShort } from "./mcp-idle.objects";
export { HeartbeatRoom, HeartbeatSweptRoom } from "./heartbeat.objects";
export { CoalesceCursors } from "./coalesce.objects";
export { RateLimitedRoom } from "./rate-limit.objects";
export { PresenceClientRoom, PresenceClientSlowTick } from "./presence-client.objects";
export { RoomsLoopSequencer, RoomsLoopShard } from "./rooms.objects";
export { RoomsPresenceSequencer, RoomsPresenceShard } from "./rooms-presence.objects";
export { YjsNotes, YjsParty } from "./yjs.objects";
export { StreamsLog } from "./streams.objects";
export { SessionsChat } from "./sessions-client.objects";

/** Sends `{"type":"welcome","id","uri"}` after the connect sequence, so tests can see the upgrade URL and frame order. */
function welcome(connection: { id: string; uri: string | null; send(message: string): void }): void {
  connection.send(JSON.stringify({ type: "welcome", id: connection.id, uri: connection.uri }));
}

/** Echoes binary frames and `echo:` text frames back to the sender, so tests can check `send()` and `binaryType`. */
function echo(connection: { send(message: string | ArrayBuffer): void }, message: string | ArrayBuffer): void {
  if (typeof message !== "string" || message.startsWith("echo:")) connection.send(message);
}

const isReadonly = (request: Request) => new URL(request.url).searchParams.get("mode") === "view";
const isSensor = (request: Request) => new URL(request.url).searchParams.get("client") === "sensor";

/** The reference server: a plain Durable Object using agents/lifecycle, agents/websockets and agents/state. */
export class RefAgent extends DurableObject<Env> {
  readonly board: State<unknown> = new State<unknown>({
    initialState: { count: 0 },
    validateStateChange: (next) => {
      if ((next as { count?: unknown })?.count === -1) throw new Error("count must not be -1");
    },
    onChanged: (_state, source) => this.webSockets.broadcastState(source),
  });
  readonly webSockets: WebSockets = new WebSockets({
    state: this.board,
    callables: new ScenarioCallables({
      setServerState: (state) => this.board.set(state),
      closeConnection: (id, code, reason) => this.webSockets.getConnection(id)?.close(code, reason),
    }),
    readonly: (_connection, ctx) => isReadonly(ctx.request),
    protocol: (_connection, ctx) => !isSensor(ctx.request),
    handlers: { onConnect: (connection) => welcome(connection), onMessage: echo },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.board).use(this.webSockets);
}

/** The same object built with dokit: dokit/lifecycle, dokit/websockets, dokit/state, dokit/capnweb. */
export class DokitAgent extends DurableObject<Env> {
  readonly board: DokitState<unknown> = new DokitState<unknown>({
    initialState: { count: 0 },
    validate: (next) => {
      if ((next as { count?: unknown })?.count === -1) throw new Error("count must not be -1");
    },
  });
  readonly webSockets: DokitWebSockets = new DokitWebSockets({
    state: this.board,
    callables: new ScenarioCallables({
      setServerState: (state) => this.board.set(state),
      closeConnection: (id, code, reason) => this.webSockets.getConnection(id)?.close(code, reason),
    }),
    readonly: (_connection, ctx) => isReadonly(ctx.request),
    protocol: (_connection, ctx) => !isSensor(ctx.request),
    handlers: { onConnect: (connection) => welcome(connection), onMessage: echo },
    capnweb,
  });
  readonly lifecycle = DokitLifecycle.install(this).use(this.board).use(this.webSockets);
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    // Test-only: POST /evict/<name> evicts that DokitAgent (evict.route.ts).
    return (
      (await evictRoute(request, env.DokitAgent)) ??
      (await authedRoute(request, env)) ??
      (await idRoomEvictRoute(request, env)) ??
      (await presenceClientEvictRoute(request, env)) ??
      (await rateLimitedEvictRoute(request, env)) ??
      (await yjsEvictRoute(request, env)) ??
      (await streamsEvictRoute(request, env)) ??
      (await sessionsChatRoute(request, env)) ??
      (await userRefusalRoute(request, env)) ??
      (await roomsRoute(request, env)) ??
      (await roomsPresenceRoute(request, env)) ??
      (await routeAgentRequest(request, env)) ??
      // y-partyserver's provider builds /parties/<party>/<room> (yjs.test.ts).
      (await routeAgentRequest(request, env, { prefix: "parties" })) ??
      new Response("no route", { status: 404 })
    );
  },
} satisfies ExportedHandler<Env>;
