import { routeAgentRequest } from "../../src/routing";

export { DelegatingRoom, DisabledRoom, HostRoutedRoom, InspectedRoom, McpRoom, PresenceRoom, RefusingRoom, SweptRoom } from "./objects";
export { YjsInspectedRoom } from "./objects-yjs";

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    return (await routeAgentRequest(request, env)) ?? new Response("no route", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
