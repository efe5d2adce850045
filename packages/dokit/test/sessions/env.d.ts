import type { Conversation, LiveConversation, ObservedConversation } from "./objects";
import type { ConversationObject } from "./reference-docs";

declare global {
  interface Env {
    CONVERSATION: DurableObjectNamespace<Conversation>;
    REFERENCE_DOCS: DurableObjectNamespace<ConversationObject>;
    LIVE: DurableObjectNamespace<LiveConversation>;
    OBSERVED: DurableObjectNamespace<ObservedConversation>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
