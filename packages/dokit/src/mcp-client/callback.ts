import type { ServerConnection } from "./connection";
import type { McpClientsOptions } from "./options";
import { callbackPage, redirectTo } from "./page";
import type { Registry } from "./registry";

/** What the OAuth callback route works on. */
export interface CallbackScope {
  readonly registry: Registry;
  readonly connections: ReadonlyMap<string, ServerConnection>;
  readonly options: McpClientsOptions;
  /** Announces a change of a server's state (the frame, `onChanged`). */
  changed(): void;
}

/**
 * GET {callbackPath}?code&state (or ?error&state): completes the authorization `state` belongs to.
 * @returns the configured redirect, or the page that closes the popup
 */
export async function answerCallback(request: Request, scope: CallbackScope): Promise<Response> {
  const params = new URL(request.url).searchParams;
  const state = params.get("state");
  const { registry, options } = scope;
  // Single use: the state is cleared by this lookup, valid or not.
  const row = state ? registry.takeState(state, Date.now()) : undefined;
  if (!row) return finish(options, false, undefined, "unknown or expired authorization state");
  const connection = scope.connections.get(row.id);
  if (!connection) return finish(options, false, undefined, "the server was removed");
  const refused = params.get("error");
  const code = params.get("code");
  if (refused || !code) {
    const why = refused ? `authorization refused: ${refused.replace(/[^\w .-]/g, "").slice(0, 100)}` : "the callback carries no code";
    registry.update(row.id, { auth_url: null, verifier: null });
    connection.authUrl = null;
    connection.state = "failed";
    connection.error = why;
    scope.changed();
    return finish(options, false, row.id, why);
  }
  try {
    await connection.finishAuth(params);
  } catch {
    return finish(options, false, row.id, connection.error ?? "the authorization could not be completed");
  }
  return finish(options, connection.state === "ready", row.id, connection.error ?? undefined);
}

/** @returns the redirect configured for the outcome (with `serverId`, and `error` on failure), else the popup page */
function finish(options: McpClientsOptions, ok: boolean, serverId: string | undefined, error?: string): Response {
  const target = ok ? options.successRedirect : options.errorRedirect;
  if (!target) return callbackPage(ok);
  const url = new URL(target);
  if (serverId) url.searchParams.set("serverId", serverId);
  if (!ok && error) url.searchParams.set("error", error);
  return redirectTo(url.href);
}
