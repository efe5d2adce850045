import { routeAgentRequest } from "../../src/routing";

export { AlarmHost, DelegatingHost, FlakyStart, PlainHost } from "./objects";

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.searchParams.has("props")) {
      return (
        (await routeAgentRequest(request, env, { props: { user: url.searchParams.get("props") } })) ??
        new Response("no route", { status: 404 })
      );
    }
    if (url.pathname.startsWith("/cors/")) {
      return (
        (await routeAgentRequest(request, env, { prefix: "cors", cors: true })) ??
        new Response("no route", { status: 404 })
      );
    }
    return (await routeAgentRequest(request, env)) ?? new Response("no route", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
