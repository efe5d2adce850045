import type { Capability } from "../lifecycle/capability";
import type { WebSockets } from "../websockets/websockets";

// What the Inspector reads of the capabilities it shows. Capabilities never
// import each other, so each is named here by the part of its public API the
// page uses: the real WebSockets, State, McpHandler, McpClients, Scheduler and
// Queue fit these shapes, and so does anything of your own with the same members.

/** The WebSockets members the Inspector uses: listing, flags, close. */
export type InspectedWebSockets = Pick<WebSockets, "getConnections" | "getConnection" | "isReadonly" | "setReadonly" | "isProtocolEnabled" | "use"> & {
  /** @returns what it holds that keeps the object in memory (coalesced broadcasts waiting for their tick), one line each */
  keepsAwake?(): string[];
};

/** Who is here: `Presence` from `dokit/presence` fits. */
export interface InspectedPresence {
  /** @returns every present connection and its value */
  list(): unknown;
  /** @returns what it holds that keeps the object in memory (changes waiting for the tick), one line each */
  keepsAwake?(): string[];
}

/** A synced value: a `State` from `dokit/state` fits. */
export interface InspectedState {
  /** @returns the current value */
  get(): unknown;
}

/** An MCP server capability: `McpHandler` from `dokit/mcp` fits. */
export interface InspectedMcp {
  /** @returns the MCP sessions the object holds now */
  sessions(): unknown;
}

/** An MCP client capability: `McpClients` from `dokit/mcp-client` fits. */
export interface InspectedMcpClients {
  /** @returns the MCP servers the object is connected to */
  servers(): unknown;
  /** @returns what it holds open that keeps the object in memory (open notification streams), one line each */
  keepsAwake?(): string[];
}

/** Durable jobs: `Scheduler` from `dokit/schedule` and `Queue` from `dokit/queue` fit. */
export interface InspectedJobs {
  /** @returns the pending jobs */
  list(): Promise<unknown[]> | unknown[];
}

/** Durable task runs: `Tasks` from `dokit/tasks` fits. */
export interface InspectedTasks {
  /** @returns the newest runs, each with its state, attempts, status and journal of steps */
  inspect(): Promise<unknown[]> | unknown[];
}

/** A Yjs document: `YjsDocument` from `dokit/yjs` fits. */
export interface InspectedYjs {
  /** @returns what storage holds: the snapshot's bytes, and the updates stored since (count and bytes) */
  storedSize(): { snapshotBytes: number; updates: number; updateBytes: number } | Promise<{ snapshotBytes: number; updates: number; updateBytes: number }>;
  /** @returns the open connections that edit the document */
  getConnections(): Iterable<{ id: string }>;
  /** @returns the awareness (name, colour, cursor) of the clients a connection speaks for; called with what `getConnections()` gave */
  getAwareness?(connection: { id: string }): unknown;
  /** Whether the document is in memory (else it is on disk only, until an event needs it). */
  readonly loaded?: boolean;
  /** @returns what it holds that keeps the object in memory (a pending change hook), one line each */
  keepsAwake?(): string[];
}

/** Options of {@link Inspector}. */
export interface InspectorOptions {
  /**
   * Serve the page at all (default `false`). When false the Inspector claims
   * nothing: its path is an unclaimed path, exactly as if it were not installed.
   */
  enabled?: boolean;
  /**
   * Decides whether a request may see the page, its snapshot and its feed.
   * Default: local development only ({@link isLocalDevelopment}: the request's
   * host is `localhost`, `127.0.0.1` or `[::1]`). A refused request falls through
   * like an unclaimed path (the host's `onRequest`, else 404). Cross-site requests
   * (an `Origin` or `Sec-Fetch-Site` from another site) are refused whatever this says.
   */
  authorize?: (request: Request) => boolean | Promise<boolean>;
  /** The route below the object's URL (default `/__dokit`). */
  path?: string;
  /**
   * The events capability, `new Observability()` from `dokit/observability`: installed
   * with the Inspector when it is enabled (and only then), so the page's event log
   * has events to show. Leave it out when the object installs Observability itself.
   */
  observability?: Capability;
  /** The WebSockets capability whose connections the page lists (and can close or make readonly). */
  webSockets?: InspectedWebSockets;
  /** The synced value to show (a `State`). */
  state?: InspectedState;
  /** A heartbeat sweep (`HeartbeatSweep` from `dokit/websockets`), to show when its alarm wakes the object. */
  heartbeatSweep?: { wakes(): Promise<string[]> | string[] };
  /** Presence, to list who is here. */
  presence?: InspectedPresence;
  /** A Yjs document (`YjsDocument`), to show its stored size and the connected editors. Reading it never loads the document. */
  yjs?: InspectedYjs;
  /** The MCP server capability, to list its sessions. */
  mcp?: InspectedMcp;
  /** The MCP client capability, to list its servers. */
  mcpClients?: InspectedMcpClients;
  /** The Scheduler, to list scheduled jobs. */
  scheduler?: InspectedJobs;
  /** The Queue, to list queued jobs. */
  queue?: InspectedJobs;
  /** Tasks, to list runs with their steps. */
  tasks?: InspectedTasks;
  /**
   * Show the values of query parameters in each connection's `uri` (default `false`: every value
   * reads `redacted`, names stay), for upgrade URLs that carry no tokens.
   */
  showQueryValues?: boolean;
  /** How many recent events the Inspector keeps for a page that opens (default 200). */
  maxEvents?: number;
}

/** One open connection as the page shows it. */
export interface ConnectionView {
  id: string;
  tags: readonly string[];
  readonly: boolean;
  protocol: boolean;
  /** `open`, `closing` or `closed` (the socket's `readyState`). */
  readyState: string;
  /** When the connection opened, if this instance saw it open (`null` after a wake). */
  connectedAt: number | null;
  /** The user's per-connection value (`connection.state`). */
  state: unknown;
  /** The upgrade URL; query values read `redacted` unless `showQueryValues` is set. */
  uri: string | null;
}

/** A Yjs document as the page shows it. */
export interface YjsView {
  /** Whether the document is in memory (`null` when the capability does not say). */
  loaded: boolean | null;
  /** What storage holds, in bytes: the snapshot plus the updates since. */
  storedBytes: number;
  /** The same, in parts. */
  size: { snapshotBytes: number; updates: number; updateBytes: number };
  /** Each open Yjs connection, and the awareness of the clients it speaks for (names, colours, cursors). */
  editors: { id: string; awareness?: unknown }[];
}

/** A section the Inspector could not read: the error's message, never its stack. */
export interface SectionError {
  error: string;
}

/** What the page shows, as JSON (`GET <path>/snapshot` and the feed's `snapshot` message). */
export interface InspectorSnapshot {
  /** The host's class name (`Board`). */
  agent: string;
  /** The kebab-case class name the identity frame carries (`board`). */
  className: string;
  /** The object's name, or its id when it has none. */
  name: string;
  /** A random id of this instance: a new one after every wake. */
  instance: string;
  /** When this instance was constructed (its last wake). */
  since: number;
  /** When the snapshot was taken. */
  now: number;
  /** Whether the object publishes events (Observability is installed), so the log can fill. */
  events: boolean;
  connections?: ConnectionView[] | SectionError;
  state?: { value: unknown } | SectionError;
  /** Who is here: `[{ id, value }]`. */
  presence?: unknown;
  /** The Yjs document: its stored size and the editors connected to it, each with its clients' awareness. */
  yjs?: YjsView | SectionError;
  mcpSessions?: unknown;
  mcpServers?: unknown;
  /** What dokit knows keeps the object in memory now (open MCP notification streams, a pending coalescing or presence tick) or wakes it (a heartbeat sweep); empty when nothing. */
  keepsAwake?: string[] | SectionError;
  schedules?: unknown;
  queue?: unknown;
  /** Task runs, newest first, with their steps. */
  tasks?: unknown;
}
