// The chat Worker: the page at `/`, its script at `/page.js`, and the room at
// `/agents/chat-room/{name}` through routeAgentRequest.
import { routeAgentRequest } from "dokit/routing";
import files from "./page-bundle.js";

export { ChatRoom } from "./chat-room";

const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dokit chat</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  header { display: flex; gap: .5rem; align-items: baseline; flex-wrap: wrap; }
  h1 { font-size: 1.3rem; margin: 0 1rem 0 0; }
  #log { list-style: none; padding: .5rem; margin: 1rem 0; height: 22rem; overflow-y: auto; border: 1px solid #ccc; border-radius: 6px; background: #fafafa; }
  #log li { padding: .15rem 0; }
  #log .me b { color: #0a6; } #log .notice { color: #777; font-style: italic; }
  form { display: flex; gap: .5rem; } input[name=text] { flex: 1; }
  input, button { font: inherit; padding: .35rem .5rem; }
  #status { color: #777; font-size: .85rem; }
</style>
<header>
  <h1>dokit chat</h1>
  <span>room <b id="room"></b></span>
  <span>you are <b id="nickname"></b></span>
  <span id="status">connecting…</span>
</header>
<ul id="log" aria-live="polite"></ul>
<form id="say"><input name="text" autocomplete="off" placeholder="Say something (or /nick name)" aria-label="message"><button>Send</button></form>
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
    return (await routeAgentRequest(request, env)) ?? servePage(request) ?? new Response("Not found", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
