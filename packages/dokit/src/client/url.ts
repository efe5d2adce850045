// The upgrade URL, in the shape the official client builds:
// {ws|wss}://{host}/{prefix}/{kebab(agent)}/{name}[/{path}]?_pk={id}&{query}
import { CAPNWEB, TRANSPORT_PARAM } from "../protocol/capnweb";
import { CONNECTION_ID_PARAM } from "../protocol/agents";
import { kebab } from "../protocol/kebab";
import type { AgentClientOptions, AgentClientProperties, QueryParams } from "./types";

/**
 * Hosts reached over plain `ws`: loopback and private networks, the same
 * set the official client treats as local, plus bare `localhost` and `[::1]`.
 * @returns whether `host` (without scheme) is local
 */
export function isLocalHost(host: string): boolean {
  const hostname = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.split(":")[0]!;
  if (hostname === "localhost" || hostname === "[::1]" || hostname === "[::ffff:7f00:1]") return true;
  const octets = hostname.split(".").map(Number);
  if (octets.length !== 4 || octets.some((n) => !Number.isInteger(n))) return false;
  const [a, b] = octets as [number, number];
  return a === 127 || a === 10 || (a === 192 && b === 168) || (a === 172 && b >= 16 && b <= 31);
}

/** @returns `host` without a scheme and without a trailing slash */
export function bareHost(options: Pick<AgentClientOptions, "host">): string {
  const host = options.host ?? (globalThis as { location?: { host?: string } }).location?.host;
  if (!host) throw new TypeError("dokit: AgentClient needs a `host` outside a browser page");
  return host.replace(/^(?:http|https|ws|wss):\/\//, "").replace(/\/+$/, "");
}

/**
 * The path of the object: `/{prefix}/{kebab(agent)}/{name}[/{path}]`, or `/{basePath}[/{path}]`.
 * The name is percent-encoded; the router decodes it.
 */
export function agentPath(options: AgentClientOptions<never>): string {
  if (options.path?.startsWith("/")) throw new TypeError("dokit: `path` must not start with a slash");
  const base = options.basePath
    ? options.basePath.replace(/^\/+/, "")
    : `${options.prefix ?? "agents"}/${kebab(options.agent)}/${encodeURIComponent(options.name ?? "default")}`;
  return `/${base}${options.path ? `/${options.path}` : ""}`;
}

/**
 * Builds the URL of one connection attempt; an async `query` is evaluated here, once per attempt.
 * @param options - the client's options
 * @param id - the connection id (`_pk`)
 * @returns the `ws:` or `wss:` URL
 */
export async function socketUrl(options: AgentClientOptions<never>, id: string): Promise<string> {
  const host = bareHost(options);
  const protocol = options.protocol ?? (isLocalHost(host) ? "ws" : "wss");
  const query: QueryParams = typeof options.query === "function" ? await options.query() : (options.query ?? {});
  const params = new URLSearchParams({ [CONNECTION_ID_PARAM]: id });
  for (const [key, value] of Object.entries(query)) {
    if (value !== null && value !== undefined) params.append(key, String(value));
  }
  if (options.transport === "capnweb") params.set(TRANSPORT_PARAM, CAPNWEB);
  return `${protocol}://${host}${agentPath(options)}?${params}`;
}

/**
 * Applies `updateProperties()` to the options; `room` and `party` are read as `name` and `agent`.
 * @param options - the current options
 * @param properties - the changes; a key left out or `undefined` stays as it was
 * @returns the options for the next connection attempt
 */
export function withProperties<State>(
  options: AgentClientOptions<State>,
  properties: AgentClientProperties,
): AgentClientOptions<State> {
  const { room, party, ...rest } = properties;
  const next: Record<string, unknown> = { ...options, name: room ?? options.name, agent: party ?? options.agent };
  for (const [key, value] of Object.entries(rest)) if (value !== undefined) next[key] = value;
  // SAFETY: only keys of AgentClientOptions were copied in, each with a value of its own type.
  return next as unknown as AgentClientOptions<State>;
}
