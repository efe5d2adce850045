import type { McpCounter } from "../../mcp-counter/src/mcp-counter";
import type { Assistant } from "./assistant";

declare global {
  interface Env {
    Assistant: DurableObjectNamespace<Assistant>;
    McpCounter: DurableObjectNamespace<McpCounter>;
  }
}
