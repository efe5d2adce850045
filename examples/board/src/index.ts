// The board Worker: the React page at `/`, `POST /promote` (the Worker's auth
// check, then DO RPC), and the board at `/agents/board/{name}` through routeAgentRequest.
import { getAgentByName, routeAgentRequest } from "dokit/routing";
import files from "./page-bundle.js";

export { Board, BoardCallables } from "./board";

const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dokit board</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  header { display: flex; gap: 1rem; align-items: baseline; flex-wrap: wrap; }
  h1 { font-size: 1.3rem; margin: 0; }
  .badge { border-radius: 999px; padding: .1rem .6rem; font-size: .8rem; background: #e6f4ea; color: #0a6; }
  .badge.view { background: #fdecea; color: #b3261e; }
  .columns { display: grid; grid-template-columns: repeat(3, 1fr); gap: 1rem; margin: 1rem 0; }
  .column { background: #f4f5f7; border-radius: 8px; padding: .6rem; min-height: 12rem; }
  .column h2 { font-size: .85rem; text-transform: uppercase; letter-spacing: .05em; color: #666; margin: 0 0 .5rem; }
  .card { background: #fff; border-radius: 6px; box-shadow: 0 1px 2px #0002; padding: .5rem; margin-bottom: .5rem; display: flex; gap: .25rem; align-items: center; }
  .card span { flex: 1; }
  .card button { border: 0; background: none; cursor: pointer; color: #666; padding: 0 .2rem; }
  form { display: flex; gap: .5rem; flex-wrap: wrap; } input, select, button { font: inherit; padding: .3rem .5rem; }
  input[name=text] { flex: 1; } [role=alert] { color: #b3261e; min-height: 1.4em; }
  .columns { position: relative; }
  .here { display: flex; gap: .4rem; list-style: none; padding: 0; margin: .8rem 0 0; flex-wrap: wrap; }
  .here li { border: 2px solid; border-radius: 999px; padding: 0 .6rem; font-size: .85rem; }
  .cursor { position: absolute; pointer-events: none; transform: translate(2px, 2px); color: #fff; font-size: .75rem; padding: 0 .35rem; border-radius: 4px; white-space: nowrap; }
  .typing { color: #666; min-height: 1.4em; margin: .3rem 0 0; font-size: .9rem; }
</style>
<div id="root"></div>
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

/**
 * `POST /promote {board, connectionId}`: makes a view-only connection an editor.
 * Authentication belongs here, in the Worker, before any object is involved:
 * the demo compares a shared token; a real app checks its session cookie, an
 * Access JWT or an OAuth token, and which boards that user may edit.
 */
async function promote(request: Request, env: Env): Promise<Response> {
  const token = request.headers.get("Authorization")?.replace(/^Bearer /, "") ?? "";
  if (!(await sameSecret(token, env.BOARD_EDITOR_TOKEN))) return new Response("Forbidden", { status: 403 });
  // SAFETY: every field is checked below before use.
  const body = (await request.json().catch(() => ({}))) as { board?: unknown; connectionId?: unknown };
  if (typeof body.board !== "string" || typeof body.connectionId !== "string") {
    return new Response("Expected {board, connectionId}", { status: 400 });
  }
  // DO RPC: the object's own method, not a callable; no client can reach it.
  const promoted = await getAgentByName(env.Board, body.board).promote(body.connectionId);
  return Response.json({ promoted });
}

/** Compares secrets in constant time (by their SHA-256, so lengths may differ). */
async function sameSecret(given: string, expected: string): Promise<boolean> {
  const digest = (text: string) => crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  const [a, b] = await Promise.all([digest(given), digest(expected)]);
  return expected.length > 0 && crypto.subtle.timingSafeEqual(a, b);
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === "/promote" && request.method === "POST") return promote(request, env);
    // Authenticate before routing, too: here every visitor may open the board.
    return (await routeAgentRequest(request, env)) ?? servePage(request) ?? new Response("Not found", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
