import type { Connection, FrameContext, ProtocolFrame } from "../lifecycle/capability";
import { MCP_SERVERS, type MCPServersState } from "../protocol/mcp-client";
import type { ServerConnection } from "./connection";
import type { McpClientsOptions } from "./options";

/** A catalogue item with the id of the server that offers it. */
export type WithServerId<T> = T & { serverId: string };

/** @returns the `kind` items of every server, each with its `serverId` */
export function collect<K extends "tools" | "prompts" | "resources">(connections: Iterable<ServerConnection>, kind: K): WithServerId<ServerConnection[K][number]>[] {
  const items: WithServerId<ServerConnection[K][number]>[] = [];
  for (const connection of connections) {
    for (const item of connection[kind]) items.push({ ...item, serverId: connection.id });
  }
  return items;
}

/** @returns the servers and catalogue in the reference's `MCPServersState` shape; `auth_url` is `null` everywhere unless `withAuthUrls` */
export function serversState(connections: readonly ServerConnection[], withAuthUrls: boolean): MCPServersState {
  const servers: MCPServersState["servers"] = {};
  for (const c of connections) {
    servers[c.id] = {
      name: c.name,
      server_url: c.url,
      auth_url: withAuthUrls ? c.authUrl : null,
      state: c.state,
      error: c.error,
      instructions: c.instructions,
      capabilities: c.capabilities,
    };
  }
  return { servers, tools: collect(connections, "tools"), prompts: collect(connections, "prompts"), resources: collect(connections, "resources") };
}

/**
 * The `cf_agent_mcp_servers` frame, serialized once per change: one string for every
 * connection, or, while an authorization is pending, a second one without the `auth_url`s
 * for the connections that may not authorize (see {@link McpClientsOptions.canAuthorize}).
 */
export class ServersFrame {
  readonly #connections: () => ServerConnection[];
  readonly #canAuthorize: McpClientsOptions["canAuthorize"];
  /** The serialized frame, until the next change: `full` for connections that may authorize, `pending` (no `auth_url`) for others. */
  #frame: { full: string; pending: string } | undefined;

  /**
   * @param connections - reads the servers (loading them first when needed)
   * @param canAuthorize - McpClients' `canAuthorize` option
   */
  constructor(connections: () => ServerConnection[], canAuthorize: McpClientsOptions["canAuthorize"]) {
    this.#connections = connections;
    this.#canAuthorize = canAuthorize;
  }

  /** Forgets the serialized frame: the servers changed. */
  reset(): void {
    this.#frame = undefined;
  }

  /** @returns the frame for every connection (a string), or a choice per connection while an authorization is pending */
  frame(): ProtocolFrame {
    if (!this.#frame) {
      const connections = this.#connections();
      const full = JSON.stringify({ type: MCP_SERVERS, mcp: serversState(connections, true) });
      const pending = connections.some((c) => c.authUrl) ? JSON.stringify({ type: MCP_SERVERS, mcp: serversState(connections, false) }) : full;
      this.#frame = { full, pending };
    }
    const { full, pending } = this.#frame;
    return full === pending ? full : (connection, context) => (this.#mayAuthorize(connection, context) ? full : pending);
  }

  /** @returns whether the connection may see pending authorization URLs */
  #mayAuthorize(connection: Connection, context: FrameContext | undefined): boolean {
    const readonly = context?.readonly === true;
    const decide = this.#canAuthorize;
    if (!decide) return !readonly;
    try {
      return decide(connection, { readonly }) === true;
    } catch (error) {
      console.error("dokit: McpClients canAuthorize failed; the connection is not shown authorization URLs", error);
      return false;
    }
  }
}
