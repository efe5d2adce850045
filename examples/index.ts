// The `pnpm dev` worker: an index page and every example's objects.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "dokit/lifecycle";
import { routeAgentRequest } from "dokit/routing";

export class Hello extends DurableObject {
  readonly lifecycle = Lifecycle.install(this);

  onRequest(): Response {
    return new Response(`Hello from ${this.lifecycle.name}, a plain Durable Object run by dokit.\n`);
  }
}

const INDEX = `<!doctype html><meta charset="utf-8"><title>dokit demos</title>
<h1>dokit demos</h1>
<ul><li><a href="/agents/hello/world">hello</a>: a plain Durable Object behind routeAgentRequest</li></ul>`;

export default {
  async fetch(request: Request, env: Record<string, unknown>): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/") return new Response(INDEX, { headers: { "content-type": "text/html; charset=utf-8" } });
    return (await routeAgentRequest(request, env)) ?? new Response("Not found", { status: 404 });
  },
};
