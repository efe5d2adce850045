import type {
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
  FetchLike,
} from "@modelcontextprotocol/client";
import type { Connection } from "../lifecycle/connection";
import type { MCPConnectionState } from "../protocol/mcp-client";

/** Options of {@link McpClients}. */
export interface McpClientsOptions {
  /** The client name the object announces to servers (and registers with OAuth servers). */
  name: string;
  /** The client version the object announces to servers. */
  version: string;
  /**
   * Decides whether the object may fetch `url` (the server, and every OAuth endpoint it leads to).
   * Default: https only, and no private or loopback host except in local development.
   * @returns `true` to allow
   */
  allowUrl?: (url: URL) => boolean;
  /**
   * Whether the object runs in local development, where the default policy also allows
   * `http:` and private or loopback hosts. Default: decided per `add()`, true when the request
   * that reached the object (or the WebSocket upgrade of the calling connection) was addressed
   * to a loopback host (`localhost`, `127.0.0.1`, `[::1]`), as under `wrangler dev`, and did not
   * come from a page on another site (`Origin` of another host, or `Sec-Fetch-Site: cross-site`).
   */
  localDevelopment?: boolean;
  /**
   * Whether a WebSocket connection is shown pending authorization URLs (`auth_url` in
   * `cf_agent_mcp_servers`). Whoever opens one may complete the authorization with their own
   * account, and spends its single-use `state`. Other connections see the server `authenticating`
   * with `auth_url: null`. Default: every connection that is not readonly.
   * @returns `true` to show this connection the URLs
   */
  canAuthorize?: (connection: Connection, context: { readonly: boolean }) => boolean;
  /** The path (below the object's base path) of the OAuth callback route it claims (default `/mcp-client/callback`). */
  callbackPath?: string;
  /**
   * The absolute OAuth callback URL, when the object is not reached through `routeAgentRequest`
   * (default: the origin and base path of the request or connection that called `add()`, plus `callbackPath`).
   */
  callbackUrl?: string;
  /** Where the browser goes after a successful authorization (default: a small page that closes the popup). */
  successRedirect?: string;
  /** Where the browser goes after a failed authorization, with `?error=` (default: a small page that says so). */
  errorRedirect?: string;
  /** Milliseconds an authorization may take between `add()` and the callback (default 10 minutes). */
  authorizationTtlMs?: number;
  /** Milliseconds to connect and list the catalogue before the server is `failed` (default 15 000). */
  connectTimeoutMs?: number;
  /** Default timeout of tool calls, prompt and resource reads, in milliseconds (default 60 000). */
  requestTimeoutMs?: number;
  /** Most tools, prompts or resources kept per server; a server offering more is `failed` (default 500 each). */
  maxCatalogueSize?: number;
  /** Largest response body accepted from a server when its length is announced, in bytes (default 8 MiB). */
  maxResponseBytes?: number;
  /**
   * Milliseconds without use (no call, no catalogue read) after which the notification stream of
   * each listening server is closed, so the object can hibernate (default 30 000). The server
   * still shows `ready` with its catalogue; the next use reconnects and lists the catalogue again.
   * `Infinity` keeps the streams open while the object lives (it then never hibernates).
   */
  streamIdleMs?: number;
  /** Reconnect the stored servers when the object starts, in the background (default false: on first use). */
  connectOnStart?: boolean;
  /** The fetch every server request goes through (default: the global `fetch`). Tests route it to a local worker. */
  fetch?: FetchLike;
  /** Answers a server's elicitation request (advertised only when set). Without it, servers cannot elicit. */
  onElicitation?: (serverId: string, request: ElicitRequest["params"]) => ElicitResult | Promise<ElicitResult>;
  /** Answers a server's sampling request (advertised only when set). */
  onSampling?: (serverId: string, request: CreateMessageRequest["params"]) => CreateMessageResult | Promise<CreateMessageResult>;
  /** Runs after every change of the server list or catalogue (also broadcast as `cf_agent_mcp_servers`). */
  onChanged?: () => void;
}

/** Options of {@link McpClients.add}. */
export interface AddServerOptions {
  /** A stable id chosen by the caller (letters, digits, `_` and `-`, up to 64); default a random one. */
  id?: string;
  /** Headers sent with every request to the server (an API key, for example). Stored; never broadcast. */
  headers?: Record<string, string>;
  /** How to reach the server. */
  transport?: TransportOptions;
}

/** How a server is reached. */
export interface TransportOptions {
  /** Streamable HTTP (2026-07-28 and 2025 eras, as the client SDK negotiates); `"auto"` means the same. The old SSE transport is not offered. */
  type?: "streamable-http" | "auto";
  /** Headers sent with every request (the reference's place for them; merged under `AddServerOptions.headers`). */
  headers?: Record<string, string>;
  /**
   * Keep a stream open for server notifications (list changes, server requests outside calls).
   * Default true. An open stream keeps the object in memory; McpClients closes it after
   * `streamIdleMs` without use (default 30 s), and `false` never opens it.
   */
  listen?: boolean;
}

/** What {@link McpClients.add} returns. */
export interface AddServerResult {
  id: string;
  state: MCPConnectionState;
  /** Where to send the user to authorize the object, while `state` is `authenticating`. */
  authUrl?: string;
  /** Why the server failed, when `state` is `failed`. */
  error?: string;
}

/** One registered server, as {@link McpClients.servers} lists it (no secrets). */
export interface McpServerInfo {
  id: string;
  name: string;
  url: string;
  state: MCPConnectionState;
  error: string | null;
  authUrl: string | null;
  instructions: string | null;
}
