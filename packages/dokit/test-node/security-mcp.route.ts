// Test-only: `/authed/<kebab binding>/<name>/...` routes with props built from
// the request, as a Worker does from its own auth: `x-test-user` becomes
// `props.user` and `x-test-token` (when sent) `props.token`.
import { routeAgentRequest } from "../src/routing";

/** @returns the object's answer for an `/authed/...` request, or `undefined` for any other */
export async function authedRoute(request: Request, env: object): Promise<Response | undefined> {
  if (!new URL(request.url).pathname.startsWith("/authed/")) return undefined;
  const user = request.headers.get("x-test-user");
  const token = request.headers.get("x-test-token");
  const props = user === null ? undefined : { user, ...(token !== null && { token }) };
  return (await routeAgentRequest(request, env, { prefix: "authed", ...(props && { props }) })) ?? undefined;
}
