import { routeAgentRequest } from "../../src/routing";

export { Conversation, LiveConversation, ObservedConversation } from "./objects";
export { ConversationObject } from "./reference-docs";

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    return (await routeAgentRequest(request, env)) ?? new Response("no route", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
