import type { AgentChat } from "./agent-chat";

declare global {
  interface Env {
    AgentChat: DurableObjectNamespace<AgentChat>;
  }
}
