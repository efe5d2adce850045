// The sensor-hub Worker: the dashboard at `/`, and the hub at
// `/agents/sensor-hub/{name}` through routeAgentRequest (sensors add `?client=sensor&sensor={id}`).
import { routeAgentRequest } from "dokit/routing";
import files from "./page-bundle.js";

export { HubCallables, SensorHub } from "./sensor-hub";

const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dokit sensor hub</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; max-width: 48rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  table { border-collapse: collapse; width: 100%; margin: 1rem 0; font-variant-numeric: tabular-nums; }
  th, td { text-align: right; padding: .35rem .6rem; border-bottom: 1px solid #ddd; } th:first-child, td:first-child { text-align: left; }
  button { font: inherit; padding: .35rem .7rem; }
  #device { font: 12px/1.4 ui-monospace, monospace; background: #f4f5f7; padding: .5rem; border-radius: 6px; min-height: 4rem; white-space: pre-wrap; }
</style>
<h1>Sensor hub</h1>
<p>Sensors send readings (a callable, or an 8-byte binary frame) without ever receiving protocol frames.
Readings are stored in SQLite; this table is the hub's synced state. <span id="status">connecting…</span></p>
<table><thead><tr><th>sensor</th><th>last</th><th>min</th><th>max</th><th>mean</th><th>readings</th><th>updated</th></tr></thead>
<tbody id="rows"><tr><td colspan="7">No readings yet.</td></tr></tbody></table>
<p id="alerts"></p>
<p><button id="simulate">Start a simulated sensor</button> <button id="stop" disabled>Stop sensors</button></p>
<p>What the simulated sensors receive (answers to their own calls, never identity or state):</p>
<div id="device"></div>
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
