import type { McpBroken, McpCounter, McpStateCounter, McpTuned } from "./objects";

declare global {
  interface Env {
    MCP_COUNTER: DurableObjectNamespace<McpCounter>;
    MCP_TUNED: DurableObjectNamespace<McpTuned>;
    MCP_BROKEN: DurableObjectNamespace<McpBroken>;
    MCP_STATE: DurableObjectNamespace<McpStateCounter>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
