import { OAuthProvider } from "@cloudflare/workers-oauth-provider";
import { routeAgentRequest } from "../../src/routing";

export { Assistant, EagerAssistant, IdleAssistant, McpServerObject, OAuthAssistant, RedirectingAssistant, TightAssistant } from "./objects";

/** Misbehaving "servers" for the bad-input tests, besides the routed objects. */
async function misbehave(url: URL): Promise<Response | undefined> {
  switch (url.pathname) {
    case "/garbage":
      return new Response("<html>not MCP</html>", { headers: { "content-type": "text/html" } });
    case "/garbage-json":
      return Response.json({ hello: "world" });
    case "/redirect-private":
      return new Response(null, { status: 307, headers: { location: "https://10.0.0.1/mcp" } });
    case "/redirect-loop":
      return new Response(null, { status: 307, headers: { location: "/redirect-loop" } });
    case "/http-error":
      return new Response("upstream exploded", { status: 502 });
    case "/hang":
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      return new Response("too late", { status: 504 });
    case "/huge-body":
      return new Response("x", { headers: { "content-length": String(64 * 1024 * 1024) } });
  }
  return undefined;
}

const site = {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    // The authorization server's consent step, approved at once for the user "ada" (a browser would show a page).
    if (url.pathname === "/authorize") {
      const authRequest = await env.OAUTH_PROVIDER.parseAuthRequest(request);
      const { redirectTo } = await env.OAUTH_PROVIDER.completeAuthorization({
        request: authRequest,
        userId: "ada",
        metadata: {},
        scope: authRequest.scope,
        props: { user: "ada" },
      });
      return Response.redirect(redirectTo, 302);
    }
    return (await misbehave(url)) ?? (await routeAgentRequest(request, env)) ?? new Response("no route", { status: 404 });
  },
} satisfies ExportedHandler<Env>;

/** The protected MCP server: /protected/<name>/mcp is the McpServerObject <name>, behind a valid access token. */
const protectedApi = {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const name = url.pathname.split("/")[2] ?? "none";
    const target = new URL(`/agents/mcp-server/${name}/mcp`, url);
    return (await routeAgentRequest(new Request(target, request), env)) ?? new Response("no route", { status: 404 });
  },
} satisfies ExportedHandler<Env>;

// The real @cloudflare/workers-oauth-provider: dynamic client registration, PKCE, refresh tokens.
// Access tokens live 60 s (the provider's minimum); the test replaces the stored one with a dead token to see a refresh.
export default new OAuthProvider({
  apiRoute: "/protected/",
  apiHandler: protectedApi,
  defaultHandler: site,
  authorizeEndpoint: "/authorize",
  tokenEndpoint: "/token",
  clientRegistrationEndpoint: "/register",
  accessTokenTTL: 60,
  resourceMetadata: { resource: "https://mcp.test/protected/", authorization_servers: ["https://mcp.test"] },
});
