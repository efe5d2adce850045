import { type Client, type Prompt, ProtocolError, type Resource, StreamableHTTPClientTransport, type Tool, UnauthorizedError } from "@modelcontextprotocol/client";
import { errorMessage } from "../lifecycle/errors";
import type { MCPConnectionState } from "../protocol/mcp-client";
import { guardedFetch, showableText, withTimeout } from "./fetch-guard";
import type { McpClientsOptions, TransportOptions } from "./options";
import { StoredOAuthProvider } from "./provider";
import type { Registry } from "./registry";
import { type CatalogueKind, catalogueTooLarge, listCatalogue, newClient } from "./sdk-client";

/** The settings every connection shares (McpClients' options with defaults applied). */
export interface ConnectionSettings {
  readonly options: McpClientsOptions;
  readonly registry: Registry;
  readonly connectTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly maxCatalogueSize: number;
  readonly maxResponseBytes: number;
  readonly authorizationTtlMs: number;
  /** Milliseconds without use after which an open notification stream is closed (`Infinity`: never). */
  readonly streamIdleMs: number;
  /** @returns why the URL may not be fetched for a server added with `local`, or `undefined` */
  refusal(url: URL, local: boolean): string | undefined;
  /** Called after every change of a connection's state or catalogue. */
  changed(): void;
  /** Publishes an `mcp:client:*` event on agents:mcp when it has subscribers (`payload` is built only then). */
  event(type: string, payload: () => object): void;
}

/** The transport every connection uses (the reference's name for it, in events). */
const TRANSPORT = "streamable-http";

/** Longest error text kept (and broadcast) for a failed server. */
const MAX_ERROR_LENGTH = 500;

/** The stored per-server options. */
export type StoredOptions = { headers?: Record<string, string>; transport?: TransportOptions };

/**
 * One MCP server the object is a client of: the official client and its
 * Streamable HTTP transport, the connection state and the cached catalogue.
 * Connecting is single-flight; a failure ends in `failed` with its message.
 */
export class ServerConnection {
  state: MCPConnectionState = "connecting";
  error: string | null = null;
  instructions: string | null = null;
  capabilities: Record<string, unknown> | null = null;
  authUrl: string | null = null;
  tools: Tool[] = [];
  prompts: Prompt[] = [];
  resources: Resource[] = [];
  #client: Client | undefined;
  #abort: AbortController | undefined;
  #attempt: Promise<void> | undefined;
  #closed = false;
  /** The OAuth provider of the latest transport (it knows the authorization URL the SDK asked for). */
  #provider: StoredOAuthProvider | undefined;
  /** Whether the server's stored options keep a notification stream open. */
  #listen = true;
  /** The client was closed for idleness: the server shows `ready` with its catalogue, and the next use reconnects. */
  #dormant = false;
  /** Closes an idle notification stream (armed only while one may be open and no request runs). */
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** Requests running on the client now. */
  #busy = 0;
  /** The latest error status a server or OAuth endpoint answered (`<origin> answered HTTP <status>`), for error texts. */
  #lastStatus: string | undefined;
  readonly #settings: ConnectionSettings;

  /**
   * @param id - the server's id
   * @param name - its display name
   * @param url - its endpoint
   * @param settings - shared settings, the registry and the change callback
   */
  constructor(
    readonly id: string,
    readonly name: string,
    readonly url: string,
    settings: ConnectionSettings,
  ) {
    this.#settings = settings;
    this.authUrl = settings.registry.get(id)?.auth_url ?? null;
    if (this.authUrl) this.state = "authenticating";
  }

  /** Connects unless connected, connecting, or waiting for the user to authorize. @returns when the attempt settled */
  connect(): Promise<void> {
    // Waiting for the user: a new attempt would start another authorization (once the pending one expired, it may).
    if ((this.state === "ready" && !this.#dormant) || this.#closed || (this.state === "authenticating" && this.#authorizationPending())) return Promise.resolve();
    return (this.#attempt ??= this.#connect().finally(() => (this.#attempt = undefined)));
  }

  /** @returns whether an authorization `state` is pending and unexpired */
  #authorizationPending(): boolean {
    const row = this.#settings.registry.get(this.id);
    return !!row?.oauth_state && (row.state_expires ?? 0) > Date.now();
  }

  /** @returns the connected client, connecting first when needed @throws when the server is not ready */
  async client(): Promise<Client> {
    if (this.state !== "ready" || this.#dormant) await this.connect();
    const client = this.#client;
    if (this.state !== "ready" || !client) {
      const why = this.state === "authenticating" ? "waits for authorization" : `is ${this.state}${this.error ? `: ${this.error}` : ""}`;
      throw new Error(`MCP server ${this.id} ${why}`);
    }
    return client;
  }

  /** Completes an authorization with the callback's parameters (`code`, and `iss` per RFC 9207), then connects. */
  async finishAuth(params: URLSearchParams): Promise<void> {
    this.#set("connecting");
    const transport = this.#newTransport(new AbortController());
    try {
      await withTimeout(transport.finishAuth(params), this.#settings.connectTimeoutMs, "authorization");
    } catch (error) {
      this.#fail(error);
      throw error;
    }
    this.authUrl = null;
    this.#settings.registry.update(this.id, { auth_url: null });
    await this.connect();
  }

  /**
   * A request failed below the protocol (the server or its session went away, a transport
   * error, a timeout): the server is `failed` with the message now, and the next use reconnects.
   * @returns the error's text as clients may see it
   */
  lost(error: unknown): string {
    const text = this.publicMessage(error);
    if (this.state !== "ready" || this.#closed) return text;
    this.#stopIdleTimer();
    const client = this.#client;
    this.#client = undefined;
    void client?.close().catch(() => undefined);
    this.#fail(error, text);
    this.#settings.event("mcp:client:close", () => ({ serverId: this.id, url: this.url, transport: TRANSPORT, state: this.state, error: this.error }));
    return text;
  }

  /** Closes the client; the connection is not used again. */
  async close(): Promise<void> {
    this.#settings.event("mcp:client:close", () => ({ serverId: this.id, url: this.url, transport: TRANSPORT, state: this.state, phase: "client-close" }));
    this.#closed = true;
    this.#stopIdleTimer();
    this.#abort?.abort();
    await this.#client?.close().catch(() => undefined);
  }

  // ------------------------------------------------------------------ idle

  /** Whether a notification stream may be open now (a connected client of a listening server). */
  get streaming(): boolean {
    return this.#listen && this.#client !== undefined && !this.#dormant && !this.#closed;
  }

  /** Notes a use of the server (a catalogue read): the idle period starts again. */
  touch(): void {
    if (this.#busy === 0) this.#armIdleTimer();
  }

  /** A request starts on the client: the stream stays open until it ends. */
  hold(): void {
    this.#busy++;
    this.#stopIdleTimer();
  }

  /** A request ended: the idle period starts again once none runs. */
  release(): void {
    this.#busy = Math.max(0, this.#busy - 1);
    this.touch();
  }

  #armIdleTimer(): void {
    this.#stopIdleTimer();
    const ms = this.#settings.streamIdleMs;
    if (!this.streaming || !Number.isFinite(ms)) return;
    this.#idleTimer = setTimeout(() => this.#sleep(), Math.max(0, ms));
  }

  #stopIdleTimer(): void {
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }

  /**
   * Closes the client of an idle server (its notification stream with it), so nothing
   * holds the object awake: the state stays `ready` with the catalogue, and the next use
   * reconnects and lists the catalogue again.
   */
  #sleep(): void {
    this.#idleTimer = undefined;
    const client = this.#client;
    if (this.#busy > 0 || this.state !== "ready" || !client || this.#closed) return;
    this.#dormant = true;
    this.#client = undefined;
    this.#abort?.abort();
    void client.close().catch(() => undefined);
    this.#settings.event("mcp:client:close", () => ({ serverId: this.id, url: this.url, transport: TRANSPORT, state: this.state, phase: "idle" }));
  }

  // ------------------------------------------------------------- connecting

  async #connect(): Promise<void> {
    const abort = await this.#restart();
    const transport = this.#newTransport(abort);
    const client = newClient(this.#settings.options, this.id, this.#listen, (kind, items) => this.#refreshed(kind, items));
    const timeout = this.#settings.connectTimeoutMs;
    try {
      await withTimeout(client.connect(transport, { timeout }), timeout, "connecting", abort);
    } catch (error) {
      if (!this.#closed) await this.#notConnected(error, client, abort);
      return;
    }
    if (this.#closed) return void client.close().catch(() => undefined);
    this.#client = client;
    this.authUrl = null;
    this.capabilities = (client.getServerCapabilities() as Record<string, unknown> | undefined) ?? null;
    this.instructions = client.getInstructions() ?? null;
    this.#set("connected");
    this.#settings.event("mcp:client:connect", () => ({ serverId: this.id, url: this.url, transport: TRANSPORT, state: this.state }));
    await this.#discoverOrFail(client, timeout, abort);
  }

  /** Ends the previous attempt and its client, and starts a new one in `connecting`. @returns the new attempt's controller */
  async #restart(): Promise<AbortController> {
    const abort = new AbortController();
    this.#stopIdleTimer();
    this.#dormant = false;
    this.#abort?.abort();
    this.#abort = abort;
    await this.#client?.close().catch(() => undefined);
    this.#client = undefined;
    this.error = null;
    this.#lastStatus = undefined;
    this.#set("connecting");
    this.#settings.event("mcp:client:preconnect", () => ({ serverId: this.id }));
    return abort;
  }

  /** A connect attempt failed: `authenticating` when the server asked for OAuth (the user is sent to its URL), else `failed`. */
  async #notConnected(error: unknown, client: Client, abort: AbortController): Promise<void> {
    const provider = this.#provider;
    if (error instanceof UnauthorizedError && provider?.authorizationUrl) {
      const authUrl = provider.authorizationUrl;
      this.authUrl = authUrl;
      abort.abort();
      this.#set("authenticating");
      this.#settings.event("mcp:client:authorize", () => {
        const clientId = provider.clientInformation()?.client_id;
        return { serverId: this.id, authUrl, ...(clientId && { clientId }) };
      });
      return;
    }
    abort.abort();
    await client.close().catch(() => undefined);
    this.#fail(error);
    this.#settings.event("mcp:client:connect", () => ({ serverId: this.id, url: this.url, transport: TRANSPORT, state: this.state, error: this.error }));
  }

  /** Lists the catalogue of a connected client: `ready` with it, else `failed` (the client is closed). */
  async #discoverOrFail(client: Client, timeout: number, abort: AbortController): Promise<void> {
    this.#set("discovering");
    try {
      const listing = listCatalogue(client, this.#settings.requestTimeoutMs, this.#settings.maxCatalogueSize);
      const catalogue = await withTimeout(listing, timeout, "listing the catalogue", abort);
      this.tools = catalogue.tools;
      this.prompts = catalogue.prompts;
      this.resources = catalogue.resources;
    } catch (error) {
      abort.abort();
      await client.close().catch(() => undefined);
      this.#client = undefined;
      this.#fail(error);
      this.#settings.event("mcp:client:discover", () => ({ serverId: this.id, url: this.url, state: this.state, error: this.error }));
      return;
    }
    this.#set("ready");
    this.touch();
    this.#settings.event("mcp:client:discover", () => ({
      serverId: this.id,
      url: this.url,
      state: this.state,
      tools: this.tools.length,
      prompts: this.prompts.length,
      resources: this.resources.length,
    }));
  }

  #newTransport(abort: AbortController): StreamableHTTPClientTransport {
    const row = this.#settings.registry.get(this.id);
    const stored: StoredOptions = row ? JSON.parse(row.options) : {};
    const local = row?.local === 1;
    const provider = new StoredOAuthProvider(
      this.#settings.registry,
      this.id,
      this.#settings.options.name,
      this.#settings.authorizationTtlMs,
    );
    this.#provider = provider;
    this.#listen = stored.transport?.listen !== false;
    return new StreamableHTTPClientTransport(new URL(this.url), {
      authProvider: provider,
      fetch: guardedFetch({
        base: this.#settings.options.fetch ?? ((url, init) => fetch(url, init)),
        serverUrl: this.url,
        local,
        listen: this.#listen,
        abort,
        maxResponseBytes: this.#settings.maxResponseBytes,
        refusal: this.#settings.refusal,
        status: (text) => void (this.#lastStatus = text),
      }),
      ...(stored.headers && { requestInit: { headers: stored.headers } }),
    });
  }

  /** A list-changed notification's new list: kept while `ready`, unless it is over the limit (then the server fails). */
  #refreshed(kind: CatalogueKind, items: unknown[]): void {
    if (this.state !== "ready") return;
    const tooMany = catalogueTooLarge(kind, items, this.#settings.maxCatalogueSize);
    if (tooMany) return this.#fail(tooMany);
    // SAFETY: the SDK validated the refreshed list against the schema of `kind`.
    (this as unknown as Record<CatalogueKind, unknown[]>)[kind] = items;
    this.#settings.changed();
  }

  /**
   * @returns the text kept, broadcast and returned for `error`: dokit's own messages, network errors,
   *   and the protocol's errors as they are; any other (the SDK's, which may quote a fetched body) is
   *   replaced by the status the server answered, and logged here in full.
   */
  publicMessage(error: unknown): string {
    if (error instanceof UnauthorizedError || error instanceof ProtocolError) return errorMessage(error) || "unknown error";
    const shown = showableText(error);
    if (shown !== undefined) return shown;
    console.warn(`dokit: MCP server ${this.id} failed:`, errorMessage(error));
    return this.#lastStatus ? `${this.#lastStatus} (the body is not shown; see the object's log)` : "the server's answer is not a valid MCP response (see the object's log)";
  }

  #set(state: MCPConnectionState): void {
    this.state = state;
    if (state !== "failed") this.error = null;
    this.#settings.changed();
  }

  #fail(error: unknown, message = this.publicMessage(error)): void {
    this.tools = [];
    this.prompts = [];
    this.resources = [];
    this.error = message.length > MAX_ERROR_LENGTH ? `${message.slice(0, MAX_ERROR_LENGTH)}…` : message;
    this.state = "failed";
    this.#settings.changed();
  }
}
