// The approvals Worker: a page to submit expenses and decide on them, and its JSON routes.
//   POST /expenses {amount, note}        → {runId}
//   POST /expenses/<runId>/decide {approved, by} → true, or 404 when there is no such open expense
//   GET  /expenses                       → the newest runs
//   GET  /expenses/<runId>?wait=<s>      → the run once settled (waits up to s seconds)
// The object's inspector is at /agents/approvals/demo/__dokit (localhost only).
import { routeAgentRequest } from "dokit/routing";

export { Approvals } from "./approvals";

const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dokit approvals</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  input, button { font: inherit; padding: .3rem .5rem; } table { border-collapse: collapse; width: 100%; margin-top: 1rem; }
  td, th { border-bottom: 1px solid #ddd; padding: .3rem; text-align: left; vertical-align: top; } .muted { color: #666; }
</style>
<h1>Expense approvals</h1>
<p>Each expense is a <code>dokit/tasks</code> run: it is recorded, waits for your decision (an event), then
cools off for a few seconds and is paid. Evict or restart the object at any point: the run goes on.</p>
<form id="new"><input name="amount" type="number" min="1" value="42" required> <input name="note" value="team lunch" required> <button>Submit</button></form>
<table><thead><tr><th>expense</th><th>state</th><th></th></tr></thead><tbody id="runs"></tbody></table>
<p class="muted"><a href="../agents/approvals/demo/__dokit">inspect the object</a></p>
<script type="module">
  const base = location.pathname.replace(/\\/?$/, "/");
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  async function refresh() {
    const runs = await (await fetch(base + "expenses")).json();
    document.querySelector("#runs").innerHTML = runs.map((run) => {
      const what = run.state === "completed" ? JSON.stringify(run.result) : run.state === "failed" ? run.error.message : (run.statusMessage ?? run.reason ?? "");
      const buttons = run.state === "waiting" && run.reason === "event"
        ? '<button data-id="' + esc(run.runId) + '" data-ok="1">approve</button> <button data-id="' + esc(run.runId) + '" data-ok="">reject</button>' : "";
      return "<tr><td>" + esc(run.runId.slice(0, 8)) + "</td><td>" + esc(run.state) + " <span class=muted>" + esc(what) + "</span></td><td>" + buttons + "</td></tr>";
    }).join("");
  }
  document.querySelector("#new").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    await fetch(base + "expenses", { method: "POST", body: JSON.stringify({ amount: Number(form.get("amount")), note: form.get("note") }) });
    refresh();
  });
  document.querySelector("#runs").addEventListener("click", async (event) => {
    const id = event.target.dataset?.id;
    if (!id) return;
    await fetch(base + "expenses/" + id + "/decide", { method: "POST", body: JSON.stringify({ approved: Boolean(event.target.dataset.ok), by: "you" }) });
    refresh();
  });
  refresh();
  setInterval(refresh, 1000);
</script>
</html>`;

/** @returns the JSON body as an object, or `undefined` when it is not one */
async function body(request: Request): Promise<Record<string, unknown> | undefined> {
  const value: unknown = await request.json().catch(() => undefined);
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const routed = await routeAgentRequest(request, env);
    if (routed) return routed;
    const url = new URL(request.url);
    const approvals = env.Approvals.getByName("demo");
    const [, first, runId, action] = url.pathname.split("/");
    if (url.pathname === "/" || url.pathname === "/index.html") return new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } });
    if (first !== "expenses") return new Response("Not found", { status: 404 });
    if (!runId && request.method === "GET") return new Response(await approvals.expenses(), { headers: { "content-type": "application/json" } });
    if (!runId && request.method === "POST") {
      const expense = await body(request);
      if (typeof expense?.amount !== "number" || !(expense.amount > 0) || typeof expense.note !== "string") return new Response("amount (> 0) and note expected", { status: 400 });
      return Response.json({ runId: await approvals.submit({ amount: expense.amount, note: expense.note }) });
    }
    if (runId && action === "decide" && request.method === "POST") {
      const decision = await body(request);
      const sent = await approvals.decide(runId, decision?.approved === true, typeof decision?.by === "string" ? decision.by : "someone");
      return sent ? Response.json(true) : new Response("no such open expense", { status: 404 });
    }
    if (runId && !action && request.method === "GET") {
      const seconds = Number(url.searchParams.get("wait") ?? 0) || 0.001;
      return new Response(await approvals.outcome(runId, seconds), { headers: { "content-type": "application/json" } });
    }
    return new Response("Not found", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
