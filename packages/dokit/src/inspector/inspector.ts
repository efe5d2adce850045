import type { Capability, Claims, Dispatch } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { DokitError, errorMessage } from "../lifecycle/errors";
import { subPath } from "../lifecycle/headers";
import type { Lifecycle } from "../lifecycle/lifecycle";
import { normalizeRoute } from "../lifecycle/requests";
import { Feed } from "./feed";
import { isCrossSite, isLocalDevelopment } from "./guard";
import type { ConnectionView, InspectedYjs, InspectorOptions, InspectorSnapshot, SectionError, YjsView } from "./options";
import { PAGE_SCRIPT, pageHtml } from "./page";
import { redactQuery } from "./redact";
import type { InspectorErrorCode } from "./errors";

const DEFAULT_PATH = "/__dokit";
const READY_STATES = ["connecting", "open", "closing", "closed"];
/** Headers of every answer: never cached, never framed, never sniffed, no referrer. */
const PRIVATE = {
  "cache-control": "no-store",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};
/** The page loads its own script and opens its own socket; nothing else. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * A live page for one object, for debugging: its connections (with their tags,
 * flags and age), its synced state, a live log of the events it publishes, and
 * the MCP sessions, MCP servers, scheduled jobs and queue when those are given.
 * The page can close a connection and toggle its readonly flag.
 *
 * Off unless `enabled`, and guarded: a request that `authorize` refuses (by
 * default anything but localhost) or that comes from another site falls
 * through exactly like an unclaimed path.
 *
 * ```ts
 * readonly inspector = new Inspector({ enabled: true, webSockets: this.webSockets, state: this.board });
 * readonly lifecycle = Lifecycle.install(this).use(this.board).use(this.webSockets).use(this.inspector);
 * ```
 */
export class Inspector implements Capability {
  readonly capabilityName = "Inspector";
  readonly #options: InspectorOptions;
  readonly #path: string;
  readonly #authorize: (request: Request) => boolean | Promise<boolean>;
  /** When each connection opened, by id, for those this instance saw open. */
  readonly #connectedAt = new Map<string, number>();
  readonly #since = Date.now();
  #instance: string | undefined;
  #lifecycle: Lifecycle | undefined;
  #dispatch: Dispatch | undefined;
  #feed: Feed | undefined;

  /** @param options - `enabled`, `authorize`, `path`, and the capabilities to show */
  constructor(options: InspectorOptions = {}) {
    const path = options.path ?? DEFAULT_PATH;
    if (!path.startsWith("/") || path === "/") {
      throw new DokitError<InspectorErrorCode>("INVALID_ARGUMENT", `Inspector: path "${path}" must start with "/" and name a route below the object`);
    }
    this.#options = options;
    this.#path = normalizeRoute(path);
    this.#authorize = options.authorize ?? isLocalDevelopment;
  }

  /** Claims the page's route and its feed upgrade, only when enabled. */
  attach(claims: Claims): void {
    if (this.#options.enabled !== true) return;
    const lifecycle = claims.lifecycle;
    this.#lifecycle = lifecycle;
    this.#dispatch = claims.dispatch;
    if (this.#options.observability) claims.use(this.#options.observability);
    const host = lifecycle.host;
    this.#feed = new Feed(
      { agents: [host.constructor.name, lifecycle.className], name: () => lifecycle.name },
      () => this.snapshot(),
      (action) => this.#act(action),
      this.#options.maxEvents ?? 200,
    );
    this.#options.webSockets?.use({
      onConnect: (connection) => void this.#connectedAt.set(connection.id, Date.now()),
      onClose: (connection) => void this.#connectedAt.delete(connection.id),
    });
    // GET <path> (the page), <path>/page.js, <path>/snapshot (JSON)
    claims.route(this.#path, (request, path) => this.#serve(request, path));
    // an upgrade on <path>/feed: the page's own socket, never a user connection
    claims.upgrade((request) => this.#openFeed(request));
    claims.onDestroy(() => this.#feed?.closeAll());
  }

  get #installedOn(): Lifecycle {
    if (!this.#lifecycle) throw new DokitError<InspectorErrorCode>("NOT_INSTALLED", "this Inspector is not installed or not enabled: new Inspector({ enabled: true, ... })");
    return this.#lifecycle;
  }

  // ---------------------------------------------------------------- requests

  async #serve(request: Request, path: string): Promise<Response | undefined> {
    const rest = normalizeRoute(path).slice(this.#path.length);
    if (request.method === "GET" && (rest === "" || rest === "/page.js" || rest === "/snapshot") && (await this.#allowed(request))) {
      if (rest === "/page.js") return new Response(PAGE_SCRIPT, { headers: { ...PRIVATE, "content-type": "text/javascript; charset=utf-8" } });
      if (rest === "/snapshot") return new Response(await this.#snapshotJson(), { headers: { ...PRIVATE, "content-type": "application/json" } });
      // The script's URL relative to the page's own (`__dokit/page.js` from `…/__dokit`), so a
      // Worker that serves the object under another prefix than the object sees still works.
      const pathname = new URL(request.url).pathname;
      const script = pathname.endsWith("/") ? "page.js" : `${pathname.slice(pathname.lastIndexOf("/") + 1)}/page.js`;
      return new Response(pageHtml(script), {
        headers: { ...PRIVATE, "content-type": "text/html; charset=utf-8", "content-security-policy": CSP },
      });
    }
    // Passed on: answered as an unclaimed path (the host's onRequest, else 404).
    return undefined;
  }

  async #allowed(request: Request): Promise<boolean> {
    if (isCrossSite(request)) return false;
    try {
      return (await this.#authorize(request)) === true;
    } catch (error) {
      console.error("dokit: the Inspector's authorize hook threw; refusing the request", error);
      return false;
    }
  }

  async #openFeed(request: Request): Promise<Response | undefined> {
    if (normalizeRoute(subPath(request)) !== `${this.#path}/feed`) return undefined;
    if (!(await this.#allowed(request))) return undefined;
    const { 0: client, 1: server } = new WebSocketPair();
    server.accept();
    this.#feed?.open(server);
    return new Response(null, { status: 101, webSocket: client });
  }

  // ---------------------------------------------------------------- snapshot

  /**
   * Reads what the page shows. A section that cannot be read (a throwing getter,
   * a value that is not JSON) shows its error message instead.
   * @returns the snapshot, as JSON-safe values
   */
  async snapshot(): Promise<InspectorSnapshot> {
    const lifecycle = this.#installedOn;
    const { webSockets, state, presence, yjs, mcp, mcpClients, scheduler, queue, tasks, heartbeatSweep } = this.#options;
    const snapshot: InspectorSnapshot = {
      agent: lifecycle.host.constructor.name,
      className: lifecycle.className,
      name: lifecycle.name,
      instance: (this.#instance ??= crypto.randomUUID()),
      since: this.#since,
      now: Date.now(),
      events: this.#dispatch?.observer !== undefined,
    };
    if (webSockets) snapshot.connections = await section(() => this.#connections());
    if (state) snapshot.state = await section(() => ({ value: state.get() }));
    if (presence) snapshot.presence = await section(() => presence.list());
    if (yjs) snapshot.yjs = await section(() => yjsView(yjs));
    if (mcp) snapshot.mcpSessions = await section(() => mcp.sessions());
    const awake = [webSockets, presence, yjs, mcpClients].filter((part) => part?.keepsAwake);
    if (awake.length || heartbeatSweep) {
      snapshot.keepsAwake = await section(async () => [...awake.flatMap((part) => part?.keepsAwake?.() ?? []), ...((await heartbeatSweep?.wakes()) ?? [])]);
    }
    if (mcpClients) snapshot.mcpServers = await section(() => mcpClients.servers());
    if (scheduler) snapshot.schedules = await section(() => scheduler.list());
    if (queue) snapshot.queue = await section(() => queue.list());
    if (tasks) snapshot.tasks = await section(() => tasks.inspect());
    return snapshot;
  }

  #connections(): ConnectionView[] {
    const webSockets = this.#options.webSockets;
    if (!webSockets) return [];
    const views: ConnectionView[] = [];
    const open = new Set<string>();
    for (const connection of webSockets.getConnections()) {
      open.add(connection.id);
      views.push({
        id: connection.id,
        tags: [...connection.tags],
        readonly: webSockets.isReadonly(connection),
        protocol: webSockets.isProtocolEnabled(connection),
        readyState: READY_STATES[connection.readyState] ?? String(connection.readyState),
        connectedAt: this.#connectedAt.get(connection.id) ?? null,
        state: connection.state,
        uri: this.#options.showQueryValues === true ? connection.uri : redactQuery(connection.uri),
      });
    }
    // Connections that went away without an onClose here (refused, evicted meanwhile).
    for (const id of this.#connectedAt.keys()) if (!open.has(id)) this.#connectedAt.delete(id);
    return views;
  }

  async #snapshotJson(): Promise<string> {
    return JSON.stringify(await this.snapshot());
  }

  // ----------------------------------------------------------------- actions

  /** Runs one action the page asked for. @returns an error text for the page, or `undefined` when done */
  #act(action: Record<string, unknown>): string | undefined {
    const webSockets = this.#options.webSockets;
    if (action.action === "snapshot") return undefined;
    if (!webSockets) return "No WebSockets given to the Inspector";
    const connection = typeof action.id === "string" ? webSockets.getConnection(action.id) : undefined;
    if (!connection) return `No open connection ${JSON.stringify(action.id)}`;
    switch (action.action) {
      // {"action":"close","id":"<connection id>"}
      case "close":
        closeConnection(connection);
        return undefined;
      // {"action":"readonly","id":"<connection id>","readonly":true|false}
      case "readonly":
        webSockets.setReadonly(connection, action.readonly === true);
        return undefined;
      default:
        return `Unknown action ${JSON.stringify(action.action)}`;
    }
  }
}

/** @returns the document's stored size and its editors, read without loading the document */
async function yjsView(yjs: InspectedYjs): Promise<YjsView> {
  const { snapshotBytes, updates, updateBytes } = await yjs.storedSize();
  const editors = [...yjs.getConnections()].map((connection) => ({ id: connection.id, awareness: yjs.getAwareness?.(connection) }));
  return {
    loaded: typeof yjs.loaded === "boolean" ? yjs.loaded : null,
    storedBytes: snapshotBytes + updateBytes,
    size: { snapshotBytes, updates, updateBytes },
    editors,
  };
}

/** The close the page's button sends: a normal close, with a reason that says who closed it. */
function closeConnection(connection: Connection): void {
  try {
    connection.close(1000, "Closed from the dokit inspector");
  } catch {
    // already closed
  }
}

/** @returns the section's value as JSON-safe data, or its error message */
async function section<T>(read: () => T | Promise<T>): Promise<T | SectionError> {
  try {
    const value = await read();
    // SAFETY: a JSON round trip of a value keeps its shape; bigints become strings.
    return value === undefined ? value : (JSON.parse(JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? String(v) : v))) as T);
  } catch (error) {
    return { error: errorMessage(error) };
  }
}
