import type { AgentChat } from "./agent-chat";

declare global {
  interface Env {
    AgentChat: DurableObjectNamespace<AgentChat>;
    /** "on" turns on the demo control `POST /agents/agent-chat/<chat>/crash` (unset: that route is 404). */
    AGENT_CHAT_CRASH?: string;
  }
}
