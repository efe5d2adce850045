import { routeAgentRequest } from "../../src/routing";

export { AsyncSchemaStore, AutoBoard, KvOnlyStore, ManualPresence, PlainStore, SyncedBoard, WakeConflict, WakeEager, WakeNotes, WakeRoom, WakeUndeclared, WakeVarying } from "./objects";

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    return (await routeAgentRequest(request, env)) ?? new Response("no route", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
