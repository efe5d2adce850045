// The assistant's page: an AgentClient whose onMcpUpdate renders the object's
// MCP servers and tools (the `cf_agent_mcp_servers` frame, on connect and on
// every change); the forms call the object's callables.
import { AgentClient, type MCPServersState } from "dokit/client";
import type { AssistantApi, ToolResult } from "../src/api";

type Tool = MCPServersState["tools"][number] & { description?: string; inputSchema?: { properties?: Record<string, { default?: unknown }> } };

const params = new URLSearchParams(location.search);
const name = params.get("assistant") ?? "demo";
const counter = params.get("counter") ?? "demo";
const $ = <T extends HTMLElement>(selector: string) => document.querySelector(selector) as T;
const status = $<HTMLSpanElement>("#status");
const serverList = $<HTMLUListElement>("#servers");
const toolList = $<HTMLUListElement>("#tools");
const result = $<HTMLPreElement>("#result");
const addError = $<HTMLParagraphElement>("#add-error");
const form = $<HTMLFormElement>("#add");
(form.elements.namedItem("url") as HTMLInputElement).value = `${location.origin}/agents/mcp-counter/${counter}/mcp`;
$<HTMLAnchorElement>("#counter-page").href = `/mcp-counter/?counter=${encodeURIComponent(counter)}`;

const client = new AgentClient<AssistantApi>({ agent: "Assistant", name, onMcpUpdate: render });
const assistant = client.stub;
client.ready.then(() => {
  status.textContent = "connected.";
  document.body.dataset.ready = "true";
});

/** What the user typed as each tool's arguments, kept across renders (key `serverId/name`). */
const typedArgs = new Map<string, string>();

function render(mcp: MCPServersState): void {
  const servers = Object.entries(mcp.servers);
  serverList.replaceChildren(
    ...(servers.length === 0
      ? [el("li", { className: "muted", textContent: "No servers yet." })]
      : servers.map(([id, server]) => {
          const item = el("li", {});
          item.dataset.server = id;
          item.append(
            el("b", { textContent: server.name }),
            " ",
            el("span", { className: `state state-${server.state}`, textContent: server.state }),
            " ",
            el("span", { className: "muted", textContent: server.server_url }),
            " ",
          );
          if (server.auth_url) item.append(el("a", { href: server.auth_url, target: "_blank", textContent: "Authorize" }), " ");
          const remove = el("button", { textContent: "Remove" });
          remove.addEventListener("click", () => void assistant.removeServer(id).catch(showError));
          item.append(remove);
          if (server.error) item.append(el("div", { className: "error", textContent: server.error }));
          return item;
        })),
  );
  const tools = mcp.tools as Tool[];
  toolList.replaceChildren(
    ...(tools.length === 0 ? [el("li", { className: "muted", textContent: "No tools yet." })] : tools.map(toolItem)),
  );
}

function toolItem(tool: Tool): HTMLLIElement {
  const key = `${tool.serverId}/${tool.name}`;
  const item = el("li", { className: "tool" });
  item.dataset.tool = tool.name;
  item.dataset.server = tool.serverId;
  const args = el("input", { value: typedArgs.get(key) ?? defaultArgs(tool), ariaLabel: `${tool.name} arguments` });
  args.addEventListener("input", () => typedArgs.set(key, args.value));
  const call = el("button", { textContent: "Call" });
  call.addEventListener("click", () => void callTool(tool, args.value));
  item.append(el("b", { textContent: tool.name }), " ", el("span", { className: "muted", textContent: tool.description ?? "" }), " ", args, " ", call);
  return item;
}

/** @returns the tool's arguments object with each property's schema default, as JSON */
function defaultArgs(tool: Tool): string {
  const properties = tool.inputSchema?.properties ?? {};
  const defaults = Object.fromEntries(Object.entries(properties).flatMap(([key, schema]) => ("default" in schema ? [[key, schema.default]] : [])));
  return JSON.stringify(defaults);
}

async function callTool(tool: Tool, argsText: string): Promise<void> {
  let args: Record<string, unknown>;
  try {
    args = JSON.parse(argsText || "{}");
  } catch {
    result.textContent = `${tool.name}: the arguments are not JSON`;
    return;
  }
  result.textContent = `${tool.name}…`;
  try {
    show(tool.name, await assistant.callTool(tool.serverId, tool.name, args));
  } catch (error) {
    result.textContent = `${tool.name} failed: ${(error as Error).message}`;
  }
}

function show(toolName: string, answer: ToolResult): void {
  const text = answer.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n");
  result.textContent = `${toolName}${answer.isError ? " (tool error)" : ""}: ${text}`;
  result.dataset.tool = toolName;
}

function showError(error: unknown): void {
  addError.textContent = (error as Error).message;
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  addError.textContent = "";
  const data = new FormData(form);
  try {
    const added = await assistant.addServer(String(data.get("url")), String(data.get("name")));
    if (added.state === "failed") showError(new Error(`The server failed: ${added.error ?? "unknown error"}`));
    // The list itself updates from cf_agent_mcp_servers, for every open tab.
  } catch (error) {
    showError(error);
  }
});

function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]>): HTMLElementTagNameMap[K] {
  return Object.assign(document.createElement(tag), props);
}
