// The assistant Worker: the page at `/`, the assistant at `/agents/assistant/{name}`
// (WebSockets), and, so that it has an MCP server to talk to on its own origin,
// the mcp-counter example's object at `/agents/mcp-counter/{name}/mcp`.
import { routeAgentRequest } from "dokit/routing";
import files from "./page-bundle.js";

export { McpCounter } from "../../mcp-counter/src/mcp-counter";
export { Assistant } from "./assistant";

const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dokit assistant</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; max-width: 48rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  h1 { font-size: 1.4rem; margin-bottom: .2rem; } h2 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
  form { display: flex; gap: .5rem; flex-wrap: wrap; } input, button { font: inherit; padding: .3rem .5rem; }
  input[name=url] { flex: 1; min-width: 18rem; } input[name=name] { width: 8rem; }
  ul { list-style: none; padding: 0; margin: 0; } li { padding: .45rem .6rem; border: 1px solid #ddd; border-radius: 6px; margin: .35rem 0; }
  .state { font-weight: 600; padding: 0 .35rem; border-radius: 4px; background: #eee; }
  .state-ready { background: #dff5e3; color: #05651f; } .state-failed { background: #fde2e1; color: #9b1c1c; }
  .state-authenticating { background: #fff4d6; color: #7a5200; }
  .error { color: #9b1c1c; } .muted, #status { color: #777; } .tool input { width: 14rem; font-family: ui-monospace, monospace; }
  pre { background: #f4f5f7; padding: .6rem; border-radius: 6px; white-space: pre-wrap; min-height: 1.4em; }
  code { background: #f4f5f7; padding: .1rem .3rem; border-radius: 4px; }
</style>
<h1>MCP assistant</h1>
<p>A Durable Object that is a <em>client</em> of MCP servers (<code>dokit/mcp-client</code>). It keeps the servers in its
storage and sends this page their live state and tools as <code>cf_agent_mcp_servers</code>. <span id="status">connecting…</span></p>
<h2>Add an MCP server</h2>
<form id="add">
  <input name="name" aria-label="name" value="counter" required>
  <input name="url" aria-label="MCP server URL" type="url" required>
  <button>Add server</button>
</form>
<p class="muted">Prefilled with this Worker's <a id="counter-page" href="">mcp-counter</a> MCP endpoint: watch its page while you call <code>increment</code>.</p>
<p id="add-error" class="error" role="alert"></p>
<h2>Servers</h2>
<ul id="servers"><li class="muted">No servers yet.</li></ul>
<h2>Tools</h2>
<ul id="tools"><li class="muted">No tools yet.</li></ul>
<h2>Last result</h2>
<pre id="result"></pre>
<script type="module" src="page.js"></script>
</html>`;

/** Serves the page and its script (paths relative to where the example is mounted). */
export function servePage(request: Request): Response | undefined {
  const { pathname } = new URL(request.url);
  if (pathname === "/" || pathname === "/index.html") {
    return new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } });
  }
  const script = files[pathname.slice(1)];
  if (script !== undefined) return new Response(script, { headers: { "content-type": "text/javascript; charset=utf-8" } });
  return undefined;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    // A real assistant authenticates here and gives each user their own object name.
    return (await routeAgentRequest(request, env)) ?? servePage(request) ?? new Response("Not found", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
