import { routeAgentRequest } from "../../src/routing";

export { WsBare, WsFailingConnect, WsManual, WsMixedHost, WsPlain, WsRoom } from "./objects";
export { WsHeartbeat, WsHeartbeatSweep } from "./heartbeat.objects";
export { WsCoalesce } from "./coalesce.objects";
export { WsRateLimited } from "./rate-limit.objects";
export { WsPresence } from "./presence.objects";
export { WsVotes } from "./plugin.objects";

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    return (await routeAgentRequest(request, env)) ?? new Response("no route", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
