import type { McpBroken, McpCounter, McpTuned } from "./objects";

declare global {
  interface Env {
    MCP_COUNTER: DurableObjectNamespace<McpCounter>;
    MCP_TUNED: DurableObjectNamespace<McpTuned>;
    MCP_BROKEN: DurableObjectNamespace<McpBroken>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
