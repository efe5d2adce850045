// The agent-chat Worker: dokit's route to the object, and the page at `/`.
import { routeAgentRequest } from "dokit/routing";
import files from "./page-bundle.js";

export { AgentChat } from "./agent-chat";

const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dokit agent chat</title>
<style>
  body { font: 15px/1.45 system-ui, sans-serif; max-width: 44rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  ol { list-style: none; padding: 0; } li { margin: .5rem 0; padding: .5rem .7rem; border-radius: .5rem; white-space: pre-wrap; }
  li.user { background: #e8f0fe; margin-left: 4rem; } li.assistant { background: #f3f3f3; margin-right: 4rem; }
  #reply:empty { display: none; } #reply { border: 1px dashed #aaa; }
  form { display: flex; gap: .5rem; } input { flex: 1; font: inherit; padding: .4rem; } button { font: inherit; padding: .4rem .8rem; }
  .muted { color: #666; }
</style>
<h1>A durable chat turn</h1>
<p>The conversation is a <code>dokit/sessions</code> session; each turn is a <code>dokit/tasks</code> run that
streams a scripted model's reply into a <code>dokit/streams</code> stream. Reload mid-reply: the page shows the
tokens it had and reads on from its cursor. When the reply ends it moves into the conversation and its stream is
deleted, in one transaction.</p>
<ol id="history"></ol>
<ol><li id="reply" class="assistant"></li></ol>
<form id="ask"><input name="text" placeholder="Ask something" autocomplete="off" required> <button>Send</button></form>
<p class="muted" id="status"></p>
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
