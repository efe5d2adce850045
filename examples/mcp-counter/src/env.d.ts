import type { McpCounter } from "./mcp-counter";

declare global {
  interface Env {
    McpCounter: DurableObjectNamespace<McpCounter>;
  }
}
