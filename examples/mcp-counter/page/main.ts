// Watches the counter: an AgentClient renders every state the object sends.
import { AgentClient } from "dokit/client";
import type { CounterState } from "../src/api";

const name = new URLSearchParams(location.search).get("counter") ?? "demo";
const output = document.querySelector("#count") as HTMLOutputElement;
const last = document.querySelector("#last") as HTMLParagraphElement;
const status = document.querySelector("#status") as HTMLSpanElement;
(document.querySelector("#endpoint") as HTMLElement).textContent = `${location.origin}/agents/mcp-counter/${name}/mcp`;

const client = new AgentClient<unknown, CounterState>({
  agent: "McpCounter",
  name,
  onStateUpdate: (state) => {
    output.value = String(state.count);
    last.textContent = state.last ? `+${state.last.by} by an MCP tool call at ${new Date(state.last.at).toLocaleTimeString()}` : "";
  },
});
client.ready.then(() => {
  status.textContent = "connected.";
  document.body.dataset.ready = "true";
});
