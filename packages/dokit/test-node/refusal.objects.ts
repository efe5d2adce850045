// Scenario objects and a route for the refusals dokit answers to an upgrade
// (refusal.test.ts): each must reach a real client as a 4000–4999 close.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../src/lifecycle";
import { routeAgentRequest } from "../src/routing";
import { WebSockets } from "../src/websockets";

/** Builds a WebSockets but never passes it to `use()`: the object accepts no upgrades. */
export class RefusalNoSockets extends DurableObject<Env> {
  readonly webSockets = new WebSockets();
  readonly lifecycle = Lifecycle.install(this);
}

/** Its `onStart` throws, so every upgrade fails while the object starts. */
export class RefusalStartFails extends DurableObject<Env> {
  readonly webSockets = new WebSockets();
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);

  onStart(): void {
    throw new Error("secret detail: onStart exploded");
  }
}

/**
 * `/user-refusal/<kebab binding>/<name>`: the Worker's own `onBeforeConnect` answers 401, a user's
 * refusal that dokit must pass through untouched.
 */
export async function userRefusalRoute(request: Request, env: object): Promise<Response | undefined> {
  if (!new URL(request.url).pathname.startsWith("/user-refusal/")) return undefined;
  const onBeforeConnect = () => new Response("sign in first", { status: 401 });
  return (await routeAgentRequest(request, env, { prefix: "user-refusal", onBeforeConnect })) ?? undefined;
}
