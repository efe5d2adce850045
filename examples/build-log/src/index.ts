// The build-log Worker: dokit's route to the object, and the page at `/`.
import { routeAgentRequest } from "dokit/routing";
import files from "./page-bundle.js";

export { BuildLog } from "./build-log";

const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dokit build log</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; max-width: 44rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  pre { background: #111; color: #cfc; padding: .8rem; min-height: 12rem; white-space: pre-wrap; }
  button { font: inherit; padding: .4rem .8rem; }
</style>
<h1>A build's live log</h1>
<p>Each build appends a line to a durable stream (<code>dokit/streams</code>); this page reads it over its
WebSocket with <code>client.streams.read</code>. Reload mid-build: the page shows the lines it had and
continues from its cursor, without a line twice.</p>
<button id="start">Start a build</button> <span id="status"></span>
<pre id="log"></pre>
<script type="module" src="page.js"></script>
</html>`;

/** Serves the page and its script (paths relative to where the example is mounted). */
export function servePage(request: Request): Response | undefined {
  const { pathname } = new URL(request.url);
  if (pathname === "/" || pathname === "/index.html") return new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } });
  const script = files[pathname.slice(1)];
  if (script !== undefined) return new Response(script, { headers: { "content-type": "text/javascript; charset=utf-8" } });
  return undefined;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    return (await routeAgentRequest(request, env)) ?? servePage(request) ?? new Response("Not found", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
