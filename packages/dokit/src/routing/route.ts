import { BASE_HEADER, PROPS_HEADER } from "../lifecycle/headers";
import { closeReason, refuseUpgrade } from "../lifecycle/refuse";
import { CLOSE_NO_AGENT } from "../protocol/close-codes";
import { kebab } from "../protocol/kebab";
import { isUpgrade } from "../lifecycle/requests";

/** Options of {@link routeAgentRequest}. */
export interface RouteOptions<Env = unknown> {
  /** The first path segment (default `"agents"`). */
  prefix?: string;
  /** `true` for permissive CORS headers, or the headers to send. Preflights are answered without touching the object. */
  cors?: boolean | HeadersInit;
  /** Props for the object (auth, user): passed to `start(props)` and `getCurrentAgent().props`. JSON-serializable. */
  props?: Record<string, unknown>;
  /** Create the object in a jurisdiction (e.g. `"eu"`). */
  jurisdiction?: DurableObjectJurisdiction;
  /** A location hint for a newly created object. */
  locationHint?: DurableObjectLocationHint;
  /** Runs before an upgrade is forwarded: return a Response to answer instead, or a Request to forward instead. */
  onBeforeConnect?: BeforeHook<Env>;
  /** Runs before a plain request is forwarded: return a Response to answer instead, or a Request to forward instead. */
  onBeforeRequest?: BeforeHook<Env>;
}

/** What a before-hook sees of the matched route. */
export interface RouteMatch {
  /** The kebab-case binding name from the URL. */
  agent: string;
  /** The binding in `env` it matched. */
  binding: string;
  /** The decoded object name. */
  name: string;
}

/** A hook run before forwarding; returning nothing forwards the original request. */
export type BeforeHook<Env> = (
  request: Request,
  match: RouteMatch & { env: Env },
) => Response | Request | void | Promise<Response | Request | void>;

const PERMISSIVE_CORS: Record<string, string> = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "GET, POST, HEAD, OPTIONS, DELETE",
  "Access-Control-Allow-Headers": "*",
  "Access-Control-Expose-Headers": "*",
  "Access-Control-Max-Age": "86400",
};

/**
 * @returns whether `value` is a Durable Object namespace binding
 */
function isNamespace(value: unknown): value is DurableObjectNamespace {
  return (
    value !== null &&
    typeof value === "object" &&
    typeof (value as DurableObjectNamespace).idFromName === "function" &&
    typeof (value as DurableObjectNamespace).get === "function"
  );
}

/**
 * Finds the binding in `env` whose kebab-case name is `agent`.
 * @returns the binding's name, or `undefined`
 */
export function findBinding(env: object, agent: string): string | undefined {
  for (const [key, value] of Object.entries(env)) {
    if (isNamespace(value) && kebab(key) === agent) return key;
  }
  return undefined;
}

/**
 * Parses `/{prefix}/{agent}/{name}[/rest]`.
 * @returns the kebab agent, the decoded name and the base path, or `null` when the path does not match
 */
export function matchAgentPath(
  pathname: string,
  prefix = "agents",
): { agent: string; name: string; base: string } | null {
  const parts = pathname.split("/");
  // ["", prefix, agent, name, ...]
  if (parts.length < 4 || parts[0] !== "" || parts[1] !== prefix || !parts[2] || !parts[3]) return null;
  let name: string;
  try {
    name = decodeURIComponent(parts[3]);
  } catch {
    return null;
  }
  return { agent: parts[2], name, base: `/${prefix}/${parts[2]}/${parts[3]}` };
}

function corsHeaders(cors: RouteOptions["cors"]): Headers | undefined {
  if (!cors) return undefined;
  return new Headers(cors === true ? PERMISSIVE_CORS : cors);
}

function withCors(response: Response, headers: Headers | undefined): Response {
  if (!headers || response.status === 101 || response.webSocket) return response;
  const copy = new Response(response.body, response);
  headers.forEach((value, key) => copy.headers.set(key, value));
  return copy;
}

/**
 * Sends `/agents/{kebab(binding)}/{name}[/…]` to the Durable Object `name` of
 * the binding. Authenticate the request before you route it.
 * @param request - the Worker's request
 * @param env - the Worker's env, holding the Durable Object bindings
 * @param options - prefix, CORS, props, location, before-hooks
 * @returns the object's response; 400 `Invalid request: …` naming the rule for an unknown binding; `null` when the path does not match
 */
export async function routeAgentRequest<Env extends object>(
  request: Request,
  env: Env,
  options: RouteOptions<Env> = {},
): Promise<Response | null> {
  const url = new URL(request.url);
  const match = matchAgentPath(url.pathname, options.prefix);
  if (!match) return null;
  const cors = corsHeaders(options.cors);
  if (cors && request.method === "OPTIONS") return new Response(null, { status: 204, headers: cors });
  const binding = findBinding(env, match.agent);
  const upgrade = isUpgrade(request);
  if (!binding) return withCors(unknownAgent(url, match.agent, env, upgrade), cors);

  const hook = upgrade ? options.onBeforeConnect : options.onBeforeRequest;
  let forwarded = request;
  if (hook) {
    const outcome = await hook(request, { agent: match.agent, binding, name: match.name, env });
    if (outcome instanceof Response) return withCors(outcome, cors);
    if (outcome instanceof Request) forwarded = outcome;
  }

  // SAFETY: findBinding checked that this env value is a namespace.
  let namespace = (env as Record<string, unknown>)[binding] as DurableObjectNamespace;
  if (options.jurisdiction) namespace = namespace.jurisdiction(options.jurisdiction);
  const stub = namespace.get(
    namespace.idFromName(match.name),
    options.locationHint ? { locationHint: options.locationHint } : undefined,
  );

  // The router owns these headers: a client's own copies never reach the object.
  const headers = new Headers(forwarded.headers);
  headers.set(BASE_HEADER, match.base);
  if (options.props) headers.set(PROPS_HEADER, JSON.stringify(options.props));
  else headers.delete(PROPS_HEADER);
  const response = await stub.fetch(new Request(forwarded, { headers }));
  return withCors(response, cors);
}

/**
 * Answers a path whose agent matches no binding: 400 `Invalid request` and how the
 * name is formed. The bindings that do exist are logged, and named in the answer
 * only on a local address (development), so a deployed Worker does not list them.
 * An upgrade gets a socket closed with 4404 and a short reason instead, which a
 * browser's WebSocket can read.
 */
function unknownAgent(url: URL, agent: string, env: object, upgrade: boolean): Response {
  const bindings = Object.entries(env)
    .filter(([, value]) => isNamespace(value))
    .map(([key]) => `${kebab(key)} (${key})`);
  const known = bindings.length ? `the bindings are: ${bindings.join(", ")}` : "env holds no Durable Object binding";
  const hint = `no Durable Object binding is named "${agent}": the path names a binding in kebab case (COUNTER and Counter → counter, ChatRoom → chat-room)`;
  console.warn(`dokit: routeAgentRequest: ${hint}; ${known}`);
  if (upgrade) {
    return refuseUpgrade(CLOSE_NO_AGENT, closeReason(`dokit: no Durable Object binding for the path (kebab case: ChatRoom → chat-room): "${agent}"`));
  }
  const local = LOCAL_HOSTS.has(url.hostname);
  return new Response(`Invalid request: ${hint}${local ? `; ${known}` : ""}`, { status: 400 });
}

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Gets a stub for the object `name` of a binding, by name.
 * @returns the stub
 */
export function getAgentByName<T extends Rpc.DurableObjectBranded | undefined>(
  namespace: DurableObjectNamespace<T>,
  name: string,
  options?: { jurisdiction?: DurableObjectJurisdiction; locationHint?: DurableObjectLocationHint },
): DurableObjectStub<T> {
  const ns = options?.jurisdiction ? namespace.jurisdiction(options.jurisdiction) : namespace;
  return ns.get(ns.idFromName(name), options?.locationHint ? { locationHint: options.locationHint } : undefined);
}
