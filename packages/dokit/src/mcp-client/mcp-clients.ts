import { type CallToolResult, type Client, type GetPromptResult, type Prompt, ProtocolError, type ReadResourceResult, type Resource, type Tool } from "@modelcontextprotocol/client";
import type { Capability, Claims, Connection } from "../lifecycle/capability";
import { DokitError } from "../lifecycle/errors";
import type { MCPServersState } from "../protocol/mcp-client";
import { answerCallback } from "./callback";
import { callerCallbackUrl, callerIsLocal } from "./caller";
import { type ConnectionSettings, ServerConnection, type StoredOptions } from "./connection";
import type { AddServerOptions, AddServerResult, McpClientsOptions, McpServerInfo } from "./options";
import { randomToken } from "./provider";
import { Registry } from "./registry";
import { collect, ServersFrame, serversState, type WithServerId } from "./servers-frame";
import { defaultUrlRefusal } from "./url-policy";
import type { McpClientErrorCode } from "./errors";

const DEFAULTS = {
  callbackPath: "/mcp-client/callback",
  authorizationTtlMs: 10 * 60_000,
  connectTimeoutMs: 15_000,
  requestTimeoutMs: 60_000,
  maxCatalogueSize: 500,
  maxResponseBytes: 8 * 1024 * 1024,
  streamIdleMs: 30_000,
} as const;
const ID = /^[A-Za-z0-9_-]{1,64}$/;

export type { WithServerId };

/**
 * The object as a client of remote MCP servers: a durable registry of servers
 * (with their OAuth data) in SQLite, connections re-established on first use
 * after a wake, an aggregated catalogue, and the `cf_agent_mcp_servers` frame
 * for every protocol-enabled connection (with WebSockets installed).
 *
 * ```ts
 * readonly mcp = new McpClients({ name: "assistant", version: "1.0.0" });
 * readonly lifecycle = Lifecycle.install(this).use(this.mcp).use(this.webSockets);
 * // await this.mcp.add("github", "https://api.githubcopilot.com/mcp/")
 * ```
 */
export class McpClients implements Capability {
  readonly capabilityName = "McpClients";
  readonly #options: McpClientsOptions;
  readonly #callbackPath: string;
  readonly #connections = new Map<string, ServerConnection>();
  #claims: Claims | undefined;
  #registry: Registry | undefined;
  #settings: ConnectionSettings | undefined;
  #loaded = false;
  readonly #frame: ServersFrame;

  /** @param options - the client identity, URL policy, OAuth routes, limits and server-request handlers */
  constructor(options: McpClientsOptions) {
    if (typeof options?.name !== "string" || !options.name || typeof options.version !== "string" || !options.version) {
      throw new DokitError<McpClientErrorCode>("INVALID_ARGUMENT", 'McpClients needs { name, version }, e.g. new McpClients({ name: "assistant", version: "1.0.0" })');
    }
    const path = options.callbackPath ?? DEFAULTS.callbackPath;
    if (!path.startsWith("/")) throw new DokitError<McpClientErrorCode>("INVALID_ARGUMENT", `McpClients: callbackPath "${path}" must start with "/"`);
    const idle = options.streamIdleMs;
    if (idle !== undefined && !(typeof idle === "number" && idle >= 0)) {
      throw new DokitError<McpClientErrorCode>("INVALID_ARGUMENT", "McpClients: streamIdleMs must be a number of milliseconds >= 0, or Infinity");
    }
    this.#options = options;
    this.#callbackPath = path;
    this.#frame = new ServersFrame(() => this.#restored(), options.canAuthorize);
  }

  /** @internal Claims the OAuth callback route, the connect frame, and the start and destroy hooks. */
  attach(claims: Claims): void {
    this.#claims = claims;
    claims.route(this.#callbackPath, async (request) =>
      answerCallback(request, { registry: this.#load().registry, connections: this.#connections, options: this.#options, changed: () => this.#changed() }),
    );
    claims.connectFrames((connection) => this.#connectFrame(connection));
    // In the background: start never waits for remote servers. (No hook otherwise: a wake then runs no start turn for McpClients.)
    if (this.#options.connectOnStart) claims.onStart(() => queueMicrotask(() => this.#restoreLogged()));
    claims.onDestroy(async () => {
      const closing = [...this.#connections.values()].map((connection) => connection.close());
      this.#connections.clear();
      this.#registry?.reset();
      this.#loaded = false;
      this.#frame.reset();
      await Promise.all(closing);
    });
  }

  // ---------------------------------------------------------------- servers

  /**
   * Registers a server and connects to it (a stored server with the same id, name and URL is
   * connected again). Servers that need OAuth end in `authenticating` with the `authUrl` to send the user to.
   * @param name - a display name
   * @param url - the server's Streamable HTTP endpoint
   * @param options - a stable `id`, `headers`, the `transport`
   * @returns the server's id and state after the first attempt
   * @throws DokitError URL_NOT_ALLOWED when the URL policy refuses the URL, INVALID_ARGUMENT for a bad name, URL or id
   */
  async add(name: string, url: string, options: AddServerOptions = {}): Promise<AddServerResult> {
    if (typeof name !== "string" || !name.trim()) throw new DokitError<McpClientErrorCode>("INVALID_ARGUMENT", "McpClients.add: name must be a non-empty string");
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new DokitError<McpClientErrorCode>("INVALID_ARGUMENT", `McpClients.add: "${String(url).slice(0, 200)}" is not a URL`);
    }
    const id = options.id ?? randomToken(9);
    if (!ID.test(id)) throw new DokitError<McpClientErrorCode>("INVALID_ARGUMENT", "McpClients.add: id must be 1-64 letters, digits, _ or -");
    const local = this.#isLocal();
    const refusal = this.#refusal(parsed, local);
    if (refusal) throw new DokitError<McpClientErrorCode>("URL_NOT_ALLOWED", `McpClients.add: ${parsed.origin} is not allowed: ${refusal}`);
    const { registry, settings } = this.#load();
    const existing = this.#connections.get(id);
    if (existing && (existing.name !== name || existing.url !== parsed.href)) {
      throw new DokitError<McpClientErrorCode>("INVALID_ARGUMENT", `McpClients.add: the id "${id}" is already used by another server`);
    }
    const type = options.transport?.type;
    if (type !== undefined && type !== "streamable-http" && type !== "auto") {
      throw new DokitError<McpClientErrorCode>("INVALID_ARGUMENT", `McpClients.add: transport "${String(type)}" is not offered; use "streamable-http"`);
    }
    if (!existing) {
      const stored: StoredOptions = {};
      const headers = { ...options.transport?.headers, ...options.headers };
      if (Object.keys(headers).length) stored.headers = headers;
      if (options.transport?.listen !== undefined) stored.transport = { listen: options.transport.listen };
      registry.insert({
        id,
        name,
        url: parsed.href,
        options: JSON.stringify(stored),
        callback_url: this.#options.callbackUrl || callerCallbackUrl(this.#callbackPath),
        local: local ? 1 : 0,
      });
      this.#connections.set(id, new ServerConnection(id, name, parsed.href, settings));
      this.#changed();
    }
    // SAFETY: set above, or found existing.
    const connection = this.#connections.get(id) as ServerConnection;
    await connection.connect();
    const result: AddServerResult = { id, state: connection.state };
    if (connection.authUrl) result.authUrl = connection.authUrl;
    if (connection.error) result.error = connection.error;
    return result;
  }

  /** Disconnects a server and deletes it and its OAuth data. @returns whether it existed */
  async remove(id: string): Promise<boolean> {
    const { registry } = this.#load();
    const connection = this.#connections.get(id);
    if (!connection) return false;
    this.#connections.delete(id);
    registry.delete(id);
    this.#changed();
    await connection.close();
    return true;
  }

  /** @returns the registered servers (no secrets), reconnecting stored ones in the background after a wake */
  servers(): McpServerInfo[] {
    return this.#restored().map((c) => ({
      id: c.id,
      name: c.name,
      url: c.url,
      state: c.state,
      error: c.error,
      authUrl: c.authUrl,
      instructions: c.instructions,
    }));
  }

  /** Waits until every registered server has settled (ready, failed or authenticating). */
  async ready(): Promise<void> {
    await Promise.all(this.#restored().map((c) => c.connect()));
  }

  // -------------------------------------------------------------- catalogue

  /** @returns the tools of every ready server, each with its `serverId` */
  tools(): WithServerId<Tool>[] {
    return collect(this.#restored(), "tools");
  }

  /** @returns the prompts of every ready server, each with its `serverId` */
  prompts(): WithServerId<Prompt>[] {
    return collect(this.#restored(), "prompts");
  }

  /** @returns the resources of every ready server, each with its `serverId` */
  resources(): WithServerId<Resource>[] {
    return collect(this.#restored(), "resources");
  }

  /**
   * Calls a tool on one server, connecting first when needed.
   * @returns the server's result (a tool error is a result with `isError`)
   * @throws DokitError UNKNOWN_SERVER, SERVER_UNAVAILABLE when it cannot connect, or the protocol error
   */
  async callTool(serverId: string, name: string, args: Record<string, unknown> = {}, options: { timeoutMs?: number } = {}): Promise<CallToolResult> {
    return this.#request(serverId, async (client) => (await client.callTool({ name, arguments: args }, { timeout: options.timeoutMs ?? this.#requestTimeout() })) as CallToolResult);
  }

  /** Reads a resource from one server. @throws as {@link callTool} */
  async readResource(serverId: string, uri: string, options: { timeoutMs?: number } = {}): Promise<ReadResourceResult> {
    return this.#request(serverId, (client) => client.readResource({ uri }, { timeout: options.timeoutMs ?? this.#requestTimeout() }));
  }

  /** Gets a prompt from one server. @throws as {@link callTool} */
  async getPrompt(serverId: string, name: string, args: Record<string, string> = {}, options: { timeoutMs?: number } = {}): Promise<GetPromptResult> {
    return this.#request(serverId, (client) => client.getPrompt({ name, arguments: args }, { timeout: options.timeoutMs ?? this.#requestTimeout() }));
  }

  /**
   * Runs one request on a server's client, connecting first when needed. A failure below the
   * protocol (not an error the server answered) marks the server `failed`; the next use reconnects.
   */
  async #request<T>(serverId: string, run: (client: Client) => Promise<T>): Promise<T> {
    this.#load();
    const connection = this.#connections.get(serverId);
    if (!connection) throw new DokitError<McpClientErrorCode>("UNKNOWN_SERVER", `no MCP server with the id "${serverId}"`);
    connection.hold();
    try {
      let client: Client;
      try {
        client = await connection.client();
      } catch (error) {
        throw new DokitError<McpClientErrorCode>("SERVER_UNAVAILABLE", (error as Error).message, { cause: error });
      }
      try {
        return await run(client);
      } catch (error) {
        if (error instanceof ProtocolError) throw error;
        const text = connection.lost(error);
        throw new DokitError<McpClientErrorCode>("SERVER_UNAVAILABLE", `MCP server ${serverId} failed: ${text}`, { cause: error });
      }
    } finally {
      connection.release();
    }
  }

  // ------------------------------------------------------------------ frame

  /** @returns the servers and catalogue in the reference's `MCPServersState` shape (what the frame carries), with every pending `auth_url` */
  getMcpServers(): MCPServersState {
    return serversState(this.#restored(), true);
  }

  /** The connect frame: a registry that cannot be read (no SQLite) is logged, and the connection still opens. */
  #connectFrame(connection: Connection): string | undefined {
    try {
      const frame = this.#frame.frame();
      return typeof frame === "string" ? frame : frame(connection, this.#claims?.dispatch.connectionContext(connection) ?? { readonly: false });
    } catch (error) {
      console.error("dokit: McpClients could not list its servers for a new connection", error);
      return undefined;
    }
  }

  #changed(): void {
    this.#frame.reset();
    const claims = this.#claims;
    if (claims) {
      try {
        claims.dispatch.broadcastProtocol(this.#frame.frame());
      } catch (error) {
        console.error("dokit: broadcasting the MCP servers failed", error);
      }
    }
    try {
      this.#options.onChanged?.();
    } catch (error) {
      console.error("dokit: McpClients onChanged failed", error);
    }
  }

  // ---------------------------------------------------------------- loading

  get #installed(): Claims {
    if (!this.#claims) throw new DokitError<McpClientErrorCode>("NOT_INSTALLED", "McpClients is not installed: use Lifecycle.install(this).use(mcpClients)");
    return this.#claims;
  }

  /** Reads the registry once per wake (no connection is opened). @returns the registry and the connections' settings */
  #load(): { registry: Registry; settings: ConnectionSettings } {
    if (this.#loaded && this.#registry && this.#settings) return { registry: this.#registry, settings: this.#settings };
    const claims = this.#installed;
    this.#registry ??= new Registry(claims.lifecycle.ctx.storage);
    const options = this.#options;
    this.#settings ??= {
      options,
      registry: this.#registry,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
      requestTimeoutMs: this.#requestTimeout(),
      maxCatalogueSize: options.maxCatalogueSize ?? DEFAULTS.maxCatalogueSize,
      maxResponseBytes: options.maxResponseBytes ?? DEFAULTS.maxResponseBytes,
      authorizationTtlMs: options.authorizationTtlMs ?? DEFAULTS.authorizationTtlMs,
      streamIdleMs: options.streamIdleMs ?? DEFAULTS.streamIdleMs,
      refusal: (url, local) => this.#refusal(url, local),
      changed: () => this.#changed(),
      event: (type, payload) => {
        const observer = claims.dispatch.observer;
        if (observer?.since("mcp")) observer.emit("mcp", claims.lifecycle, type, payload());
      },
    };
    const registry = this.#registry;
    const settings = this.#settings;
    for (const row of registry.all()) {
      if (!this.#connections.has(row.id)) this.#connections.set(row.id, new ServerConnection(row.id, row.name, row.url, settings));
    }
    this.#loaded = true;
    return { registry, settings };
  }

  /** Loads the registry and, on the first use after a wake, reconnects stored servers in the background. */
  #restore(): void {
    if (this.#loaded) return;
    this.#load();
    for (const connection of this.#connections.values()) void connection.connect().catch(() => undefined);
  }

  /** @returns the servers, loaded (and reconnecting in the background) on the first use after a wake; a use restarts their idle period */
  #restored(): ServerConnection[] {
    this.#restore();
    const connections = [...this.#connections.values()];
    for (const connection of connections) connection.touch();
    return connections;
  }

  /**
   * @returns what McpClients holds open that keeps the object in memory (it cannot hibernate
   *   meanwhile): one line per server whose notification stream is open, with when it closes
   */
  keepsAwake(): string[] {
    if (!this.#loaded) return [];
    const idle = this.#settings?.streamIdleMs ?? DEFAULTS.streamIdleMs;
    const closes = Number.isFinite(idle) ? `closes after ${idle} ms without use` : "kept open (streamIdleMs: Infinity)";
    return [...this.#connections.values()].filter((c) => c.streaming).map((c) => `MCP server ${c.id} (${c.url}): notification stream open, ${closes}`);
  }

  #restoreLogged(): void {
    try {
      this.#restore();
    } catch (error) {
      console.error("dokit: McpClients could not reconnect its servers at start", error);
    }
  }

  /** @returns whether the object runs in local development (see {@link McpClientsOptions.localDevelopment}) */
  #isLocal(): boolean {
    if (this.#options.localDevelopment !== undefined) return this.#options.localDevelopment;
    return callerIsLocal(this.#claims?.dispatch);
  }

  #requestTimeout(): number {
    return this.#options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
  }

  #refusal(url: URL, local: boolean): string | undefined {
    const allow = this.#options.allowUrl;
    if (allow) return allow(url) ? undefined : "refused by allowUrl";
    return defaultUrlRefusal(url, local);
  }
}
