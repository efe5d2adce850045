import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import type { Assistant, EagerAssistant, IdleAssistant, McpServerObject, OAuthAssistant, RedirectingAssistant, TightAssistant } from "./objects";

declare global {
  interface Env {
    MCP_SERVER: DurableObjectNamespace<McpServerObject>;
    ASSISTANT: DurableObjectNamespace<Assistant>;
    TIGHT_ASSISTANT: DurableObjectNamespace<TightAssistant>;
    OAUTH_ASSISTANT: DurableObjectNamespace<OAuthAssistant>;
    REDIRECTING_ASSISTANT: DurableObjectNamespace<RedirectingAssistant>;
    EAGER_ASSISTANT: DurableObjectNamespace<EagerAssistant>;
    IDLE_ASSISTANT: DurableObjectNamespace<IdleAssistant>;
    OAUTH_KV: KVNamespace;
    OAUTH_PROVIDER: OAuthHelpers;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
