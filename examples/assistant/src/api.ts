// What the page shares with the object: types only, no platform imports.

/** What `addServer` answers: the server's id and its state after the first attempt. */
export type AddedServer = {
  id: string;
  state: "authenticating" | "connecting" | "connected" | "discovering" | "ready" | "failed";
  /** Where to send the user to authorize the assistant, while `state` is `authenticating`. */
  authUrl?: string;
  /** Why the server failed, when `state` is `failed`. */
  error?: string;
};

/** A tool's answer, as the MCP server sent it (text parts are `{ type: "text", text }`). */
export type ToolResult = { content: { type: string; text?: string }[]; isError?: boolean; structuredContent?: unknown };

/** The callables (`AssistantCallables` implements it). */
export interface AssistantApi {
  /** Registers an MCP server by its Streamable HTTP URL and connects to it. Adding the same URL again reconnects it. */
  addServer(url: string, name?: string): Promise<AddedServer>;
  /** Disconnects a server and forgets it (and its OAuth data). @returns whether it existed */
  removeServer(id: string): Promise<boolean>;
  /** Calls a tool of one server. @returns the server's result (a tool error is a result with `isError`) */
  callTool(serverId: string, name: string, args?: Record<string, unknown>): Promise<ToolResult>;
}
