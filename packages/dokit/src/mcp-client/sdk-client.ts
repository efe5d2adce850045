// The official MCP client for one server: built with the capabilities the options ask for
// (elicitation, sampling) and, when the server keeps a notification stream open, refreshers for
// its list-changed notifications; and the catalogue it lists (tools, prompts, resources), each
// kind within `maxCatalogueSize`. The connection's state around them is in connection.ts.
import { Client, type ClientCapabilities, type Prompt, type Resource, type Tool } from "@modelcontextprotocol/client";
import { ConnectionError } from "./fetch-guard";
import type { McpClientsOptions } from "./options";

/** The kinds of a server's catalogue. */
export type CatalogueKind = "tools" | "prompts" | "resources";

/** A server's catalogue, as listed. */
export interface Catalogue {
  tools: Tool[];
  prompts: Prompt[];
  resources: Resource[];
}

/**
 * @returns a client for the server `serverId`, not connected yet
 * @param listen - whether the server keeps a notification stream open (list changes are followed only then)
 * @param refreshed - called with a kind's new list when the server says it changed
 */
export function newClient(options: McpClientsOptions, serverId: string, listen: boolean, refreshed: (kind: CatalogueKind, items: unknown[]) => void): Client {
  const capabilities: ClientCapabilities = {};
  if (options.onElicitation) capabilities.elicitation = { form: {} };
  if (options.onSampling) capabilities.sampling = {};
  const refresh = (kind: CatalogueKind) => ({
    onChanged: (error: Error | null, items: unknown[] | null) => {
      if (!error && items) refreshed(kind, items);
    },
  });
  const client = new Client(
    { name: options.name, version: options.version },
    {
      capabilities,
      versionNegotiation: { mode: "auto" },
      listMaxPages: 16,
      // Change notifications need an open stream (GET, or the 2026-era subscription): only when listening.
      ...(listen && { listChanged: { tools: refresh("tools"), prompts: refresh("prompts"), resources: refresh("resources") } }),
    },
  );
  const { onElicitation, onSampling } = options;
  if (onElicitation) client.setRequestHandler("elicitation/create", (request) => onElicitation(serverId, request.params));
  if (onSampling) client.setRequestHandler("sampling/createMessage", (request) => onSampling(serverId, request.params));
  return client;
}

/**
 * Lists what the server offers (each kind only when the server declares it).
 * @param timeout - milliseconds each list request may take
 * @param max - the most items of one kind allowed
 * @throws when a kind has more than `max` items
 */
export async function listCatalogue(client: Client, timeout: number, max: number): Promise<Catalogue> {
  const caps = client.getServerCapabilities() ?? {};
  const [tools, prompts, resources] = await Promise.all([
    caps.tools ? client.listTools(undefined, { timeout }).then((r) => r.tools) : [],
    caps.prompts ? client.listPrompts(undefined, { timeout }).then((r) => r.prompts) : [],
    caps.resources ? client.listResources(undefined, { timeout }).then((r) => r.resources) : [],
  ]);
  const tooMany = catalogueTooLarge("tools", tools, max) ?? catalogueTooLarge("prompts", prompts, max) ?? catalogueTooLarge("resources", resources, max);
  if (tooMany) throw tooMany;
  return { tools, prompts, resources };
}

/** @returns an error when `items` is not a list or has more than `max` entries */
export function catalogueTooLarge(kind: CatalogueKind, items: unknown[], max: number): Error | undefined {
  if (!Array.isArray(items)) return new ConnectionError(`the server's ${kind} list is not a list`);
  return items.length > max ? new ConnectionError(`the server offers ${items.length} ${kind}, more than the ${max} allowed (maxCatalogueSize)`) : undefined;
}
