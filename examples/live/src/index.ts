// The live Worker: the page at `/`, and one room per event at `/room/<room>`:
//   GET  /room/<room> (WebSocket)       a viewer, routed to one of the room's 4 shards (`?shard=<i>` to pick one)
//   POST /room/<room>/announce {"text"} the host's announcement, published from the Worker
//   POST /room/<room>/drain?shard=<i>   drains that shard: its viewers reconnect and miss nothing
// and a shard's live inspector at `/agents/live-shard/<room>%23<i>/__dokit`.
import { routeAgentRequest } from "dokit/routing";
import { publishToRoom, routeRoomRequest, shardName } from "dokit/rooms";
import { MAX_TEXT, ROOM_NAME, SHARD_COUNT } from "./api";
import files from "./page-bundle.js";

export { RoomRelay } from "dokit/rooms";
export { LiveSequencer, LiveShard } from "./live-shard";

const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dokit live</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; max-width: 46rem; margin: 1.5rem auto; padding: 0 1rem; color: #222; }
  header { display: flex; gap: .5rem 1rem; align-items: baseline; flex-wrap: wrap; }
  h1 { font-size: 1.3rem; margin: 0; }
  .stats { display: flex; gap: .4rem; flex-wrap: wrap; margin: .7rem 0; padding: 0; list-style: none; }
  .stats li { background: #eef3f8; border-radius: 6px; padding: .15rem .55rem; font-size: .9rem; }
  .stats b { font-variant-numeric: tabular-nums; }
  #status.live { color: #0a6; } #status.away { color: #b60; }
  #log { list-style: none; padding: .5rem; margin: 0 0 .7rem; height: 20rem; overflow-y: auto; border: 1px solid #ccc; border-radius: 6px; background: #fafafa; }
  #log li { padding: .12rem 0; } #log .seq { color: #999; font-size: .8rem; font-variant-numeric: tabular-nums; display: inline-block; min-width: 2.6rem; }
  #log .announce { background: #fff4d6; border-radius: 4px; } #log .react { color: #666; font-size: .9rem; } #log .gap { color: #777; font-style: italic; }
  .reactions { display: flex; gap: .4rem; margin: 0 0 .7rem; }
  .reactions button { font-size: 1.1rem; border: 1px solid #ccc; border-radius: 999px; background: #fff; padding: .1rem .6rem; cursor: pointer; }
  form { display: flex; gap: .5rem; margin: 0 0 .6rem; } form input { flex: 1; }
  input, button { font: inherit; padding: .3rem .5rem; }
  .controls { display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; color: #555; font-size: .9rem; }
  footer { color: #777; font-size: .85rem; margin-top: 1rem; }
</style>
<div id="root"></div>
<footer>Open this page in several tabs (<code>?shard=0</code> … <code>?shard=3</code> puts a tab on a shard): every tab gets every
message once, in one order, whichever shard it is on. Drain a tab's shard or take it offline: it comes back with what it missed.</footer>
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

/** `POST /room/<room>/announce` with `{"text"}`: published to the whole room from here. */
async function announce(request: Request, env: Env, room: string): Promise<Response> {
  const body: unknown = await request.json().catch(() => undefined);
  const text = body !== null && typeof body === "object" && typeof (body as { text?: unknown }).text === "string" ? (body as { text: string }).text.trim() : "";
  if (!text || text.length > MAX_TEXT) return new Response(`Expected {"text"} of 1 to ${MAX_TEXT} characters`, { status: 400 });
  return Response.json({ seq: await publishToRoom(env, room, { kind: "announce", text }, { sequencer: "LiveSequencer" }) });
}

/** `POST /room/<room>/drain?shard=<i>`: the shard closes its viewers with 3009; they reconnect and resume. */
async function drain(env: Env, room: string, shard: string | null): Promise<Response> {
  const index = Number(shard);
  if (shard === null || !Number.isInteger(index) || index < 0 || index >= SHARD_COUNT) {
    return new Response(`Expected ?shard=<0 to ${SHARD_COUNT - 1}>`, { status: 400 });
  }
  return Response.json({ closed: await env.LiveShard.getByName(shardName(room, index)).drain() });
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const [, first, room, action] = url.pathname.split("/");
    if (first === "room" && room !== undefined) {
      if (!ROOM_NAME.test(room)) return new Response("A room name is 1 to 64 letters, digits, _ or -", { status: 400 });
      // A real event authenticates here (viewers before routing, the host before announce and drain).
      if (action === undefined) return routeRoomRequest(request, env, { shards: "LiveShard", room, shardCount: SHARD_COUNT });
      if (action === "announce" && request.method === "POST") return announce(request, env, room);
      if (action === "drain" && request.method === "POST") return drain(env, room, url.searchParams.get("shard"));
      return new Response("Not found", { status: 404 });
    }
    // A shard's inspector, reached by its object name (viewers join through /room/<room>, not here).
    if (first === "agents" && room === "live-shard" && url.pathname.split("/")[4] === "__dokit") {
      return (await routeAgentRequest(request, env)) ?? new Response("Not found", { status: 404 });
    }
    return servePage(request) ?? new Response("Not found", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
