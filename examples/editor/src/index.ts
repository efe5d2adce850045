// The editor Worker: the page at `/`, `GET /text?doc=<name>` (the object's own reading of the
// text, over DO RPC), and the document at `/agents/doc/{name}` through routeAgentRequest
// (editors connect their provider to `/agents/doc/{name}/yjs`).
import { getAgentByName, routeAgentRequest } from "dokit/routing";
import files from "./page-bundle.js";

export { Doc } from "./doc";

const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dokit editor</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  header { display: flex; gap: 1rem; align-items: baseline; flex-wrap: wrap; }
  h1 { font-size: 1.3rem; margin: 0; }
  #status { color: #777; font-size: .85rem; } #status.synced { color: #0a6; }
  #editor { border: 1px solid #ccc; border-radius: 6px; margin: 1rem 0; }
  #editor .cm-editor { height: 24rem; } #editor .cm-editor.cm-focused { outline: none; }
  /* The others' names stay beside their cursors (y-codemirror.next shows them on hover only). */
  #editor .cm-ySelectionInfo { opacity: 1; } #editor .cm-content { padding-top: 1.2em; }
  .here { display: flex; gap: .4rem; list-style: none; padding: 0; margin: 0; flex-wrap: wrap; }
  .here li { border: 2px solid; border-radius: 999px; padding: 0 .6rem; font-size: .85rem; }
  footer { color: #777; font-size: .85rem; }
</style>
<header>
  <h1>dokit editor</h1>
  <span>document <b id="doc"></b></span>
  <span>you are <b id="name"></b></span>
  <span id="status">connecting…</span>
</header>
<div id="editor"></div>
<ul class="here" aria-label="editors"></ul>
<footer>Open this page in another tab or browser: edits, cursors and names appear live. The text is stored in the Durable Object's SQLite before anyone sees it.</footer>
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
    const url = new URL(request.url);
    if (url.pathname === "/text" && request.method === "GET") {
      const name = url.searchParams.get("doc");
      if (!name) return new Response("Expected ?doc=<name>", { status: 400 });
      return new Response(await getAgentByName(env.Doc, name).text(), { headers: { "content-type": "text/plain; charset=utf-8" } });
    }
    // Authenticate before routing in a real app: here every visitor may edit.
    return (await routeAgentRequest(request, env)) ?? servePage(request) ?? new Response("Not found", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
