import { routeAgentRequest } from "../../src/routing";

export { McpBroken, McpCounter, McpStateCounter, McpTuned } from "./objects";

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    // The test stands in for an auth layer: `x-test-user` becomes the routed props.
    const user = request.headers.get("x-test-user");
    const response = await routeAgentRequest(request, env, user ? { props: { user } } : {});
    return response ?? new Response("no route", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
