// The mix-in Worker. Its existing route, /counter/{name}[/socket], forwards to
// the object as it always did; dokit's route, /agents/counter/{name}, is added
// with routeAgentRequest. The demo page is at `/`.
import { routeAgentRequest } from "dokit/routing";
import files from "./page-bundle.js";

export { Counter, CounterCallables } from "./counter";

const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dokit mix-in</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  output { display: block; font-size: 3rem; font-weight: 600; margin: 1rem 0; }
  button { font: inherit; padding: .4rem .8rem; margin-right: .5rem; }
  #log { color: #555; font-size: .9rem; }
</style>
<h1>An existing Durable Object, with dokit mixed in</h1>
<p>One counter object serves two kinds of socket: its own hand-rolled protocol
(<code>increment</code> in, <code>count:N</code> out) and a dokit connection that calls
<code>increment()</code> as a callable. Both hibernate; both see every change.</p>
<output id="count">…</output>
<button id="dokit">+1 through dokit</button><button id="legacy">+1 through the old socket</button>
<ul id="log"></ul>
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
    // Existing: the Worker addressed the object itself.
    const legacy = /^\/counter\/([^/]+)(?:\/socket)?$/.exec(new URL(request.url).pathname);
    if (legacy?.[1]) return env.Counter.get(env.Counter.idFromName(decodeURIComponent(legacy[1]))).fetch(request);
    // Added: dokit's route.
    return (await routeAgentRequest(request, env)) ?? servePage(request) ?? new Response("Not found", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
