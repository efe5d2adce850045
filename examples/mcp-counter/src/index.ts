// The mcp-counter Worker: the live page at `/`, and the counter at
// `/agents/mcp-counter/{name}` (WebSockets) and `/agents/mcp-counter/{name}/mcp` (MCP).
import { routeAgentRequest } from "dokit/routing";
import files from "./page-bundle.js";

export { McpCounter } from "./mcp-counter";

const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dokit MCP counter</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  output { display: block; font-size: 5rem; font-weight: 700; margin: 1rem 0 0; font-variant-numeric: tabular-nums; }
  #last { color: #666; min-height: 1.4em; }
  code { background: #f4f5f7; padding: .1rem .3rem; border-radius: 4px; }
</style>
<h1>MCP counter</h1>
<p>An MCP tool changes this number; this page watches it over a WebSocket. <span id="status">connecting…</span></p>
<output id="count">…</output>
<p id="last"></p>
<p>Point an MCP client at <code id="endpoint"></code> and call the <code>increment</code> tool, for example with the
MCP Inspector: <code>npx @modelcontextprotocol/inspector</code>.</p>
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
    // Authenticate before routing; pass who the user is as `props` (tools read getCurrentAgent().props).
    return (await routeAgentRequest(request, env)) ?? servePage(request) ?? new Response("Not found", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
