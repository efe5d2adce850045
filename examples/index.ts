// The `pnpm dev` worker: every example in one Worker, on local workerd with
// local SQLite storage. `/` lists the demos; `/{example}/` is an example's page;
// `/agents/{binding}/{name}` reaches an object through the example that owns it,
// so each example's own Worker logic (its auth check, its old routes) still runs.
import agentChat from "./agent-chat/src/index";
import approvals from "./approvals/src/index";
import assistant from "./assistant/src/index";
import board from "./board/src/index";
import buildLog from "./build-log/src/index";
import chat from "./chat/src/index";
import editor from "./editor/src/index";
import live from "./live/src/index";
import mcpCounter from "./mcp-counter/src/index";
import mixIn from "./mix-in/src/index";
import sensorHub from "./sensor-hub/src/index";

export { AgentChat } from "./agent-chat/src/index";
export { Approvals } from "./approvals/src/index";
export { Assistant } from "./assistant/src/index";
export { Board } from "./board/src/index";
export { BuildLog } from "./build-log/src/index";
export { ChatRoom } from "./chat/src/index";
export { Doc } from "./editor/src/index";
export { LiveSequencer, LiveShard, RoomRelay } from "./live/src/index";
export { McpCounter } from "./mcp-counter/src/index";
export { Counter } from "./mix-in/src/index";
export { SensorHub } from "./sensor-hub/src/index";

type Example = {
  /** The page is at `/{mount}/`; the example's Worker sees paths below it. */
  mount: string;
  /** Kebab-case bindings whose `/agents/…` routes go to this example's Worker. */
  agents: string[];
  /** One line for the index page. */
  description: string;
  /** The path of the live inspector (dokit/inspector) of the object the page uses by default. */
  inspector?: string;
  worker: { fetch(request: Request, env: Env): Promise<Response> };
};

const EXAMPLES: Example[] = [
  {
    mount: "chat",
    agents: ["chat-room"],
    description: "Rooms by tag, a nickname per connection, <code>broadcast(msg, { except, tag })</code>. Open it in two tabs.",
    inspector: "/agents/chat-room/lobby/__dokit",
    worker: chat,
  },
  {
    mount: "board",
    agents: ["board"],
    description:
      "A kanban board: State with a zod schema, callables with argument schemas, React with <code>useAgent</code>, " +
      'view-only tabs (<a href="/board/?mode=view">?mode=view</a>) and a Worker-checked <code>promote()</code> over DO RPC.',
    inspector: "/agents/board/demo/__dokit",
    worker: board,
  },
  {
    mount: "editor",
    agents: ["doc"],
    description:
      "A collaborative editor: CodeMirror 6 with <code>y-codemirror.next</code> and y-websocket's provider on a <code>YjsDocument</code>, " +
      "every update in SQLite before anyone sees it; names and cursors as awareness. Open it in two tabs.",
    inspector: "/agents/doc/demo/__dokit",
    worker: editor,
  },
  {
    mount: "live",
    agents: ["live-shard"],
    description:
      "A live event's chat and reactions in one room spread over 4 shard objects (<code>dokit/rooms</code>, React with <code>useRoom</code>): " +
      "every tab gets every message once, in one order, whichever shard it is on; drain a tab's shard or take it offline and it misses nothing. " +
      'Open it in several tabs (<a href="/live/?shard=0">?shard=0</a>, <a href="/live/?shard=1">?shard=1</a>).',
    inspector: "/agents/live-shard/keynote%230/__dokit",
    worker: live,
  },
  {
    mount: "build-log",
    agents: ["build-log"],
    description:
      "A build's live log on a durable stream (<code>dokit/streams</code>): every line stored before it is sent, read over the page's WebSocket " +
      "with <code>client.streams.read</code>; reload mid-build and it continues from its cursor, no line twice. Also as SSE.",
    inspector: "/agents/build-log/demo/__dokit",
    worker: buildLog,
  },
  {
    mount: "sensor-hub",
    agents: ["sensor-hub"],
    description:
      "Sensors without protocol frames report readings through callables or binary frames into SQLite; browsers watch a live summary.",
    inspector: "/agents/sensor-hub/greenhouse/__dokit",
    worker: sensorHub,
  },
  {
    mount: "mcp-counter",
    agents: ["mcp-counter"],
    description:
      "McpHandler + State: an MCP tool increments a counter this page watches live. " +
      "MCP endpoint: <code>/agents/mcp-counter/demo/mcp</code>.",
    inspector: "/agents/mcp-counter/demo/__dokit",
    worker: mcpCounter,
  },
  {
    mount: "assistant",
    agents: ["assistant"],
    description:
      "McpClients: an object that is a client of MCP servers. The page adds the mcp-counter server, lists its tools live " +
      "from <code>cf_agent_mcp_servers</code> and calls one.",
    inspector: "/agents/assistant/demo/__dokit",
    worker: assistant,
  },
  {
    mount: "mix-in",
    agents: ["counter"],
    description: "An existing Durable Object with its own <code>fetch</code> and sockets, with dokit added by delegating.",
    inspector: "/agents/counter/demo/__dokit",
    worker: mixIn,
  },
  {
    mount: "approvals",
    agents: ["approvals"],
    description:
      "Expense approvals with <code>dokit/tasks</code>: each expense is a durable run that waits for your decision (an event), " +
      "cools off (a durable sleep) and is paid once, across evictions and restarts.",
    inspector: "/agents/approvals/demo/__dokit",
    worker: approvals,
  },
  {
    mount: "agent-chat",
    agents: ["agent-chat"],
    description:
      "A chat turn that survives a reload and a crash: a <code>dokit/tasks</code> run streams a scripted model's reply into a " +
      "<code>dokit/streams</code> stream, and the finished reply moves into a <code>dokit/sessions</code> session as its stream is deleted, " +
      "in one transaction. Reload mid-reply: it continues from its cursor, no token twice.",
    inspector: "/agents/agent-chat/demo/__dokit",
    worker: agentChat,
  },
];

/** The index's link to an example's inspector. */
const inspectorLink = (e: Example) => (e.inspector ? ` <a class="inspect" href="${e.inspector}">inspect</a>` : "");

const INDEX = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dokit demos</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 44rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  li { margin: .6rem 0; } a { font-weight: 600; }
</style>
<h1>dokit demos</h1>
<p>Every example in <code>examples/</code>, served by one Worker on local workerd with local SQLite storage.</p>
<ul>
${EXAMPLES.map((e) => `  <li><a href="/${e.mount}/">${e.mount}</a>: ${e.description}${inspectorLink(e)}</li>`).join("\n")}
</ul>
<p>Each <em>inspect</em> link opens the live inspector of the object that demo uses (<code>dokit/inspector</code>,
served on localhost only): its connections, state and events as they happen.</p>`;

/** The example mounted at the first path segment, and the request as its Worker sees it (mount stripped). */
function mounted(request: Request): [Example, Request] | undefined {
  const url = new URL(request.url);
  const [, first, second] = url.pathname.split("/");
  if (first === "agents") {
    const example = EXAMPLES.find((e) => second !== undefined && e.agents.includes(second));
    return example ? [example, request] : undefined;
  }
  const example = EXAMPLES.find((e) => e.mount === first);
  if (!example) return undefined;
  url.pathname = url.pathname.slice(example.mount.length + 1) || "/";
  return [example, new Request(url, request)];
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/") return new Response(INDEX, { headers: { "content-type": "text/html; charset=utf-8" } });
    // `/chat` → `/chat/`, so the page's relative URLs (page.js, its API) resolve below the mount.
    if (EXAMPLES.some((e) => url.pathname === `/${e.mount}`)) return Response.redirect(`${url.origin}${url.pathname}/${url.search}`, 301);
    const route = mounted(request);
    return route ? route[0].worker.fetch(route[1], env) : new Response("Not found", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
