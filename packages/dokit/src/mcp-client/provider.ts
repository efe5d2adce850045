import type {
  OAuthClientInformationContext,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import type { Registry, ServerPatch } from "./registry";

/** Bytes of randomness in an OAuth `state` (256 bits, base64url). */
const STATE_BYTES = 32;

/** @returns a fresh unguessable token, base64url */
export function randomToken(bytes = STATE_BYTES): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...raw)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The client SDK's OAuth provider for one server, with every value in the
 * server's registry row: the dynamic client registration, tokens, the PKCE
 * verifier, discovery results and the pending `state`. Nothing lives only in
 * memory, so a flow survives eviction between `add()` and the callback.
 */
export class StoredOAuthProvider implements OAuthClientProvider {
  /** The authorization URL the SDK asked to redirect to, in this attempt. */
  authorizationUrl: string | undefined;
  readonly #registry: Registry;
  readonly #id: string;
  readonly #clientName: string;
  readonly #ttlMs: number;

  /**
   * @param registry - the registry holding the server's row
   * @param id - the server's id
   * @param clientName - the client name registered with the authorization server
   * @param ttlMs - how long a pending authorization's `state` is valid
   */
  constructor(registry: Registry, id: string, clientName: string, ttlMs: number) {
    this.#registry = registry;
    this.#id = id;
    this.#clientName = clientName;
    this.#ttlMs = ttlMs;
  }

  #row() {
    return this.#registry.get(this.#id);
  }

  #save(patch: ServerPatch): void {
    this.#registry.update(this.#id, patch);
  }

  get redirectUrl(): string | undefined {
    return this.#row()?.callback_url ?? undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    const redirect = this.redirectUrl;
    return {
      client_name: this.#clientName,
      redirect_uris: redirect ? [redirect] : [],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  /** A new single-use `state` for each authorization, stored with its expiry. */
  state(): string {
    const state = randomToken();
    this.#save({ oauth_state: state, state_expires: Date.now() + this.#ttlMs });
    return state;
  }

  clientInformation(_ctx?: OAuthClientInformationContext): StoredOAuthClientInformation | undefined {
    return parse(this.#row()?.client_info);
  }

  saveClientInformation(info: StoredOAuthClientInformation): void {
    this.#save({ client_info: JSON.stringify(info) });
  }

  tokens(_ctx?: OAuthClientInformationContext): StoredOAuthTokens | undefined {
    return parse(this.#row()?.tokens);
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    this.#save({ tokens: JSON.stringify(tokens), auth_url: null });
  }

  redirectToAuthorization(url: URL): void {
    if (!this.redirectUrl) {
      throw new Error("the server requires OAuth, and no callback URL is known: pass callbackUrl to McpClients, or call add() from a request routed by routeAgentRequest");
    }
    this.authorizationUrl = url.href;
    this.#save({ auth_url: url.href });
  }

  saveCodeVerifier(verifier: string): void {
    this.#save({ verifier });
  }

  codeVerifier(): string {
    const verifier = this.#row()?.verifier;
    if (!verifier) throw new Error("no PKCE code verifier is stored for this server");
    return verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#save({ discovery: JSON.stringify(state) });
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return parse(this.#row()?.discovery);
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    const all = scope === "all";
    const patch: ServerPatch = {};
    if (all || scope === "client") patch.client_info = null;
    if (all || scope === "tokens") patch.tokens = null;
    if (all || scope === "verifier") patch.verifier = null;
    if (all || scope === "discovery") patch.discovery = null;
    this.#save(patch);
  }
}

function parse<T>(text: string | null | undefined): T | undefined {
  if (!text) return undefined;
  try {
    // SAFETY: only this provider writes these columns, with JSON of the SDK's own values.
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}
