import type { Conversation, LiveConversation } from "./objects";
import type { ConversationObject } from "./reference-docs";

declare global {
  interface Env {
    CONVERSATION: DurableObjectNamespace<Conversation>;
    REFERENCE_DOCS: DurableObjectNamespace<ConversationObject>;
    LIVE: DurableObjectNamespace<LiveConversation>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
