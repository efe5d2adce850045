import { routeAgentRequest } from "../../src/routing";

export { LiveLog, ReportObject, RetainedStreams, SmallChunks } from "./objects";
export { ReportObject as ReferenceReport } from "./reference.objects";

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    return (await routeAgentRequest(request, env)) ?? new Response("no route", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
