// The Inspector's page: plain HTML, CSS and JavaScript, no framework, kept as
// strings in this module. tsdown compiles them into dist/inspector at package
// build time, so the page costs nothing to fetch from anywhere else, needs no
// loader in any bundler (wrangler, esbuild, vitest) and is in a bundle only
// when `dokit/inspector` is. Everything the page shows is written with
// `textContent` (state values, tags and event payloads are user data), and the
// page's CSP allows its own script and socket only.

const STYLE = `
:root { color-scheme: light dark; --muted: #6b7280; --line: #e5e7eb; --ok: #047857; --warn: #b45309; --bad: #b91c1c; }
body { font: 13px/1.45 ui-sans-serif, system-ui, sans-serif; margin: 0; padding: 1rem 1.25rem; }
header { display: flex; gap: .75rem; align-items: baseline; flex-wrap: wrap; border-bottom: 1px solid var(--line); padding-bottom: .6rem; }
h1 { font-size: 1.15rem; margin: 0; } h2 { font-size: .8rem; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); margin: 1.2rem 0 .4rem; }
.muted { color: var(--muted); } code, pre, td.mono { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { margin: 0; padding: .5rem; background: #8881; border-radius: 6px; overflow: auto; max-height: 16rem; white-space: pre-wrap; word-break: break-word; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 12px; }
.badge { display: inline-block; border-radius: 999px; padding: 0 .5rem; font-size: 11px; background: #8882; margin: 0 .15rem .1rem 0; }
.badge.on { background: #fde68a; color: #78350f; } .tag { background: #dbeafe; color: #1e3a8a; }
#status.live { color: var(--ok); } #status.reconnecting, #status.connecting { color: var(--warn); }
button { font: inherit; font-size: 12px; padding: .1rem .5rem; cursor: pointer; }
.toolbar { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; margin-bottom: .4rem; }
#events { max-height: 22rem; overflow: auto; display: block; } #events td { white-space: nowrap; }
#events td.detail { white-space: normal; word-break: break-all; } tr.error td { color: var(--bad); }
tr.marker td { color: var(--warn); font-style: italic; } #message { color: var(--bad); min-height: 1.2em; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(22rem, 1fr)); gap: 0 1.5rem; }
`;

/**
 * @param script - the script's URL relative to the page (`__dokit/page.js`); the script finds
 *   the snapshot and the feed from the page's own location
 * @returns the page's HTML
 */
export function pageHtml(script: string): string {
  const src = script.replace(/[&"<>']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dokit inspector</title>
<style>${STYLE}</style>
<header>
  <h1 id="title">dokit inspector</h1>
  <span class="muted" id="instance"></span>
  <span id="status" class="connecting">connecting</span>
  <button id="refresh" type="button">Refresh</button>
</header>
<div id="message" role="alert"></div>
<section>
  <h2>Connections <span class="muted" id="connection-count"></span></h2>
  <table id="connections"><thead><tr><th>id</th><th>tags</th><th>flags</th><th>socket</th><th>age</th><th>connection state</th><th></th></tr></thead><tbody></tbody></table>
</section>
<section id="yjs-section" hidden>
  <h2>Yjs document</h2>
  <p class="muted" id="yjs-size"></p>
  <table id="yjs-editors"><thead><tr><th>connection</th><th>editors (awareness)</th></tr></thead><tbody></tbody></table>
</section>
<div class="grid">
  <section id="state-section" hidden><h2>State</h2><pre id="state"></pre></section>
  <section id="mcp-sessions-section" hidden><h2>MCP sessions</h2><pre id="mcp-sessions"></pre></section>
  <section id="presence-section" hidden><h2>Presence</h2><pre id="presence"></pre></section>
  <section id="mcp-servers-section" hidden><h2>MCP servers (client)</h2><pre id="mcp-servers"></pre></section>
  <section id="keeps-awake-section" hidden><h2>Keeps the object awake</h2><pre id="keeps-awake"></pre></section>
  <section id="schedules-section" hidden><h2>Scheduled jobs</h2><pre id="schedules"></pre></section>
  <section id="queue-section" hidden><h2>Queue</h2><pre id="queue"></pre></section>
  <section id="tasks-section" hidden><h2>Task runs</h2><pre id="tasks"></pre></section>
</div>
<section>
  <h2>Events <span class="muted" id="event-count"></span></h2>
  <p id="events-off" class="muted" hidden>This object publishes no events: pass <code>observability: new Observability()</code> (from <code>dokit/observability</code>) to the Inspector, or install it on the object.</p>
  <div class="toolbar">
    <input id="filter" type="search" placeholder="filter: type, connection, text" size="32">
    <span id="channels"></span>
    <label><input id="pause" type="checkbox"> pause</label>
    <button id="clear" type="button">Clear</button>
  </div>
  <table id="events"><thead><tr><th>time</th><th>channel</th><th>type</th><th>connection</th><th>ms</th><th>payload</th></tr></thead><tbody></tbody></table>
</section>
<script src="${src}"></script>
</html>`;
}

/** The page's script, served at `<path>/page.js`. */
export const PAGE_SCRIPT = `"use strict";
(() => {
  const base = location.pathname.replace(/\\/+$/, "");
  const $ = (selector) => document.querySelector(selector);
  const MAX_EVENTS = 1000;
  const REFRESH_MS = 2000;
  let socket = null;
  let retries = 0;
  let snapshot = null;
  let skew = 0;
  let instance = null;
  let refreshSoon = 0;
  const events = [];
  const hiddenChannels = new Set();

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) {
      if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }
  const json = (value) => { try { return JSON.stringify(value, null, 2); } catch { return String(value); } };
  const short = (value) => { const text = json(value); return text === undefined ? "" : text.replace(/\\s+/g, " "); };
  const clock = (ms) => { const d = new Date(ms); return d.toTimeString().slice(0, 8) + "." + String(d.getMilliseconds()).padStart(3, "0"); };
  function age(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m " + (s % 60) + "s";
    return Math.floor(s / 3600) + "h " + Math.floor((s % 3600) / 60) + "m";
  }

  function setStatus(text) { const status = $("#status"); status.textContent = text; status.className = text; }
  function message(text) { $("#message").textContent = text || ""; }
  function send(action) {
    if (socket && socket.readyState === WebSocket.OPEN) { socket.send(JSON.stringify(action)); return true; }
    return false;
  }

  // ------------------------------------------------------------ snapshot
  function render(next) {
    if (instance !== null && next.instance !== instance) addMarker("the object restarted (new instance since " + clock(next.since) + "): snapshot reloaded");
    instance = next.instance;
    snapshot = next;
    skew = Date.now() - next.now;
    document.title = "dokit inspector: " + next.agent + " " + next.name;
    $("#title").textContent = next.agent + " · " + next.name;
    $("#instance").textContent = next.className + " · instance " + next.instance.slice(0, 8) + " since " + clock(next.since);
    $("#events-off").hidden = next.events !== false;
    renderConnections(next.connections);
    show("state", next.state && ("error" in next.state ? next.state : next.state.value), next.state !== undefined);
    renderYjs(next.yjs);
    show("presence", next.presence, next.presence !== undefined);
    show("mcp-sessions", next.mcpSessions, next.mcpSessions !== undefined);
    show("mcp-servers", next.mcpServers, next.mcpServers !== undefined);
    show("keeps-awake", Array.isArray(next.keepsAwake) && next.keepsAwake.length === 0 ? "nothing dokit knows of" : next.keepsAwake, next.keepsAwake !== undefined);
    show("schedules", next.schedules, next.schedules !== undefined);
    show("queue", next.queue, next.queue !== undefined);
    show("tasks", next.tasks, next.tasks !== undefined);
    document.body.dataset.ready = "true";
  }
  function show(id, value, present) {
    $("#" + id + "-section").hidden = !present;
    if (present) $("#" + id).textContent = json(value);
  }
  function renderConnections(connections) {
    const body = $("#connections tbody");
    body.replaceChildren();
    if (connections === undefined) { $("#connection-count").textContent = "(no WebSockets given to the Inspector)"; return; }
    if (!Array.isArray(connections)) { $("#connection-count").textContent = "could not read: " + connections.error; return; }
    $("#connection-count").textContent = "(" + connections.length + " open)";
    for (const c of connections) {
      const flags = el("td", {},
        el("span", { class: "badge flag-readonly" + (c.readonly ? " on" : "") }, c.readonly ? "readonly" : "writable"),
        el("span", { class: "badge flag-protocol" + (c.protocol ? "" : " on") }, c.protocol ? "protocol" : "no protocol"));
      const tags = el("td", {}, ...c.tags.map((tag) => el("span", { class: "badge tag" }, tag)));
      const ageCell = el("td", { class: "age", "data-since": c.connectedAt === null ? "" : String(c.connectedAt) });
      const actions = el("td", {},
        el("button", { type: "button", class: "toggle-readonly", onclick: () => send({ action: "readonly", id: c.id, readonly: !c.readonly }) }, c.readonly ? "make writable" : "make readonly"),
        " ",
        el("button", { type: "button", class: "close", onclick: () => send({ action: "close", id: c.id }) }, "close"));
      const row = el("tr", { "data-connection": c.id },
        el("td", { class: "mono id" }, c.id), tags, flags, el("td", { class: "ready-state" }, c.readyState), ageCell,
        el("td", { class: "mono" }, c.state === null ? "" : short(c.state)), actions);
      body.append(row);
    }
    tick();
  }
  function renderYjs(y) {
    $("#yjs-section").hidden = !y;
    if (!y) return;
    const s = y.size || {};
    $("#yjs-size").textContent = y.error ? "could not read: " + y.error : y.storedBytes + " B stored (snapshot " + s.snapshotBytes + " B, " + s.updates + " updates " + s.updateBytes + " B), " + (y.loaded ? "in memory" : "on disk only");
    $("#yjs-editors tbody").replaceChildren(...(y.editors || []).map((e) => el("tr", { "data-editor": e.id }, el("td", { class: "mono id" }, e.id),
      el("td", {}, ...(Array.isArray(e.awareness) ? e.awareness : []).map((c) => el("span", { class: "badge editor-name", title: short(c.state) }, String((c.state && c.state.user && c.state.user.name) || "client " + c.clientID)))))));
  }
  function tick() {
    if (!snapshot) return;
    const now = Date.now() - skew;
    for (const cell of document.querySelectorAll("td.age")) {
      const since = cell.dataset.since;
      cell.textContent = since ? age(now - Number(since)) : "over " + age(now - snapshot.since);
      cell.title = since ? "opened " + clock(Number(since)) : "opened before this instance started (" + clock(snapshot.since) + ")";
    }
  }

  // -------------------------------------------------------------- events
  function addEvent(channel, event) {
    const payload = (event && typeof event.payload === "object" && event.payload) || {};
    const entry = {
      channel, time: typeof event.timestamp === "number" ? event.timestamp : Date.now(), type: String(event.type),
      connection: payload.connectionId || "", ms: payload.durationMs ?? payload.duration ?? "", payload,
    };
    if (!hiddenChannels.has(channel) && !$("#channels [data-channel='" + CSS.escape(channel) + "']")) addChannel(channel);
    events.push(entry);
    if (events.length > MAX_EVENTS) events.shift();
    if (!$("#pause").checked) appendRow(entry);
    clearTimeout(refreshSoon);
    refreshSoon = setTimeout(() => send({ action: "snapshot" }), 150);
  }
  function addMarker(text) {
    const entry = { marker: text, time: Date.now(), channel: "", type: "", connection: "", ms: "", payload: {} };
    events.push(entry);
    appendRow(entry);
  }
  function matches(entry) {
    if (entry.marker) return true;
    if (hiddenChannels.has(entry.channel)) return false;
    const filter = $("#filter").value.trim().toLowerCase();
    if (!filter) return true;
    return (entry.type + " " + entry.channel + " " + entry.connection + " " + short(entry.payload)).toLowerCase().includes(filter);
  }
  function appendRow(entry) {
    if (!matches(entry)) return;
    const body = $("#events tbody");
    if (entry.marker) {
      body.append(el("tr", { class: "marker" }, el("td", {}, clock(entry.time)), el("td", { colspan: "5" }, entry.marker)));
    } else {
      const rest = Object.fromEntries(Object.entries(entry.payload).filter(([key]) => key !== "connectionId" && key !== "durationMs"));
      const detail = short(rest);
      const row = el("tr", { class: "event" + (/error|fail|refus|reject/.test(entry.type) ? " error" : ""), "data-type": entry.type, "data-channel": entry.channel },
        el("td", { class: "mono" }, clock(entry.time)), el("td", {}, entry.channel.replace(/^agents:/, "")), el("td", { class: "mono type" }, entry.type),
        el("td", { class: "mono" }, entry.connection), el("td", { class: "mono" }, typeof entry.ms === "number" ? entry.ms.toFixed(1) : String(entry.ms)),
        el("td", { class: "mono detail", title: detail }, detail.length > 240 ? detail.slice(0, 240) + "…" : detail));
      body.append(row);
    }
    while (body.rows.length > MAX_EVENTS) body.deleteRow(0);
    const box = $("#events");
    box.scrollTop = box.scrollHeight;
    $("#event-count").textContent = "(" + events.length + ")";
  }
  function redrawEvents() {
    $("#events tbody").replaceChildren();
    for (const entry of events) appendRow(entry);
    $("#event-count").textContent = "(" + events.length + ")";
  }
  function addChannel(channel) {
    const box = el("input", { type: "checkbox", "data-channel": channel, onchange: (e) => {
      if (e.target.checked) hiddenChannels.delete(channel); else hiddenChannels.add(channel);
      redrawEvents();
    } });
    box.checked = true;
    $("#channels").append(el("label", {}, box, " " + channel.replace(/^agents:/, "") + " "));
  }

  // ---------------------------------------------------------------- feed
  let first = true;
  function connect() {
    const url = new URL(base + "/feed", location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    setStatus("connecting");
    const ws = new WebSocket(url);
    socket = ws;
    first = true;
    ws.onopen = () => { retries = 0; setStatus("live"); message(""); };
    ws.onmessage = (e) => {
      let m;
      try { m = JSON.parse(e.data); } catch { return; }
      if (m.kind === "snapshot") {
        // On a reopened feed to the same instance, the server sends its recent events again.
        if (first && instance !== null && m.snapshot.instance === instance) { events.length = 0; redrawEvents(); }
        first = false;
        render(m.snapshot);
      } else if (m.kind === "event") addEvent(m.channel, m.event);
      else if (m.kind === "error") message(m.message);
    };
    ws.onclose = () => {
      if (socket !== ws) return;
      socket = null;
      setStatus("reconnecting");
      setTimeout(connect, Math.min(5000, 250 * 2 ** retries++));
    };
  }

  $("#refresh").addEventListener("click", async () => {
    if (send({ action: "snapshot" })) return;
    const response = await fetch(base + "/snapshot", { cache: "no-store" });
    if (response.ok) render(await response.json()); else message("Refresh failed: " + response.status);
  });
  $("#filter").addEventListener("input", redrawEvents);
  $("#pause").addEventListener("change", redrawEvents);
  $("#clear").addEventListener("click", () => { events.length = 0; redrawEvents(); });
  setInterval(tick, 1000);
  setInterval(() => { if (!document.hidden) send({ action: "snapshot" }); }, REFRESH_MS);
  connect();
})();
`;
