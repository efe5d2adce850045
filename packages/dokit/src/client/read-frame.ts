// Reads a server frame field by field before the client uses it. A frame is
// data from the network: a field of the wrong type (an object where a string
// belongs, a `toString` of null) must never throw inside the socket's message
// listener, where it would escape as an uncaught exception (in Node, one that
// ends the process). Anything unreadable comes back as a reason, not a throw.
import type { MCPServersState } from "../protocol/mcp-client";
import type { PresenceEntry } from "../protocol/presence";
import { DOKIT_ERROR } from "../protocol/dokit-error";
import { IDENTITY, RPC, STATE, STATE_ERROR } from "../protocol/agents";
import { MCP_SERVERS } from "../protocol/mcp-client";
import { PRESENCE } from "../protocol/presence";

/** One present connection on the wire: `[id, value]`. */
export type PresencePair = PresenceEntry;

/** A protocol frame the client acts on, with every field it reads checked. */
export type ServerFrame =
  | { type: typeof IDENTITY; name: string; agent: string; stateFollows: boolean }
  | { type: typeof STATE; state: unknown }
  | { type: typeof STATE_ERROR; error: string }
  | { type: typeof MCP_SERVERS; mcp: MCPServersState }
  | { type: typeof RPC; id: string; success: true; done: boolean; result: unknown }
  | { type: typeof RPC; id: string; success: false; error: string }
  | { type: typeof PRESENCE; you: string; all: PresencePair[] }
  | { type: typeof PRESENCE; you?: undefined; set: PresencePair[]; left: string[] }
  | { type: typeof DOKIT_ERROR; code: string; error: string };

/** A protocol frame (by its `type`) that has a field of the wrong type: what is wrong, and the rpc id when it has one. */
export type Unreadable = { type: string; problem: string; id?: string };

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const isOptionalString = (value: unknown) => value === undefined || value === null || typeof value === "string";

/**
 * @param text - a text frame from the server
 * @returns the protocol frame; `undefined` for anything that is not one (ordinary messages); an {@link Unreadable} for a malformed one
 */
export function readFrame(text: string): ServerFrame | Unreadable | undefined {
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return undefined; // not JSON: an ordinary message
  }
  if (!isObject(frame)) return undefined;
  const bad = (problem: string): Unreadable => ({ type: String(frame.type), problem });
  switch (frame.type) {
    // {"type":"cf_agent_identity","name","agent","stateFollows"?:true}
    case IDENTITY: {
      const { name, agent, stateFollows } = frame;
      if (typeof name !== "string") return bad("name is not a string");
      if (typeof agent !== "string") return bad("agent is not a string");
      if (stateFollows !== undefined && typeof stateFollows !== "boolean") return bad("stateFollows is not a boolean");
      return { type: IDENTITY, name, agent, stateFollows: stateFollows === true };
    }
    // {"type":"cf_agent_state","state"}
    case STATE:
      return Object.hasOwn(frame, "state") ? { type: STATE, state: frame.state } : bad("state is missing");
    // {"type":"cf_agent_state_error","error"}
    case STATE_ERROR:
      return typeof frame.error === "string" ? { type: STATE_ERROR, error: frame.error } : bad("error is not a string");
    // {"type":"cf_agent_mcp_servers","mcp":{servers,tools,prompts,resources}}
    case MCP_SERVERS: {
      const problem = mcpProblem(frame.mcp);
      // SAFETY: mcpProblem checked every field of MCPServersState.
      return problem ? bad(problem) : { type: MCP_SERVERS, mcp: frame.mcp as MCPServersState };
    }
    // {"type":"rpc","id","success":true,"done","result"?} or {"type":"rpc","id","success":false,"error"}
    case RPC: {
      const { id, success, done, error } = frame;
      if (typeof id !== "string") return bad("id is not a string");
      const unreadable = (problem: string): Unreadable => ({ type: RPC, problem, id });
      if (success === false) return typeof error === "string" ? { type: RPC, id, success, error } : unreadable("error is not a string");
      if (success !== true) return unreadable("success is not a boolean");
      if (done !== undefined && typeof done !== "boolean") return unreadable("done is not a boolean");
      return { type: RPC, id, success, done: done !== false, result: frame.result };
    }
    // {"type":"dokit_presence","you","all":[[id,value],…]} or {"type":"dokit_presence","set"?:[[id,value],…],"left"?:[id,…]}
    case PRESENCE: {
      const { you, all, set, left } = frame;
      if (you !== undefined || all !== undefined) {
        if (typeof you !== "string") return bad("you is not a string");
        const problem = pairsProblem("all", all);
        // SAFETY: pairsProblem checked that `all` is an array of [string, non-null] pairs.
        return problem ? bad(problem) : { type: PRESENCE, you, all: all as PresencePair[] };
      }
      const problem = (set === undefined ? undefined : pairsProblem("set", set)) ?? leftProblem(left);
      if (problem) return bad(problem);
      // SAFETY: checked above: `set` is absent or an array of pairs, `left` absent or an array of strings.
      return { type: PRESENCE, set: (set ?? []) as PresencePair[], left: (left ?? []) as string[] };
    }
    // {"type":"dokit_error","code","error",…}
    case DOKIT_ERROR: {
      const { code, error } = frame;
      if (typeof code !== "string") return bad("code is not a string");
      if (typeof error !== "string") return bad("error is not a string");
      return { type: DOKIT_ERROR, code, error };
    }
  }
  return undefined;
}

/** @returns what is wrong with a presence list, or `undefined` when it is an array of `[string id, non-null value]` pairs */
function pairsProblem(key: string, pairs: unknown): string | undefined {
  if (!Array.isArray(pairs)) return `${key} is not an array`;
  for (const [index, pair] of pairs.entries()) {
    if (!Array.isArray(pair) || pair.length !== 2) return `${key}[${index}] is not an [id, value] pair`;
    if (typeof pair[0] !== "string") return `${key}[${index}] has an id that is not a string`;
    if (pair[1] === null || pair[1] === undefined) return `${key}[${index}] has no value`;
  }
  return undefined;
}

/** @returns what is wrong with a presence frame's `left`, or `undefined` when it is absent or an array of strings */
function leftProblem(left: unknown): string | undefined {
  if (left === undefined) return undefined;
  if (!Array.isArray(left)) return "left is not an array";
  return left.every((id) => typeof id === "string") ? undefined : "left has an id that is not a string";
}

/** @returns what is wrong with an `mcp` value, or `undefined` when it has the shape of MCPServersState */
function mcpProblem(mcp: unknown): string | undefined {
  if (!isObject(mcp)) return "mcp is not an object";
  if (!isObject(mcp.servers)) return "mcp.servers is not an object";
  for (const [id, server] of Object.entries(mcp.servers)) {
    if (!isObject(server)) return `mcp.servers[${JSON.stringify(id)}] is not an object`;
    for (const key of ["name", "server_url", "state"]) {
      if (typeof server[key] !== "string") return `mcp.servers[${JSON.stringify(id)}].${key} is not a string`;
    }
    for (const key of ["auth_url", "error", "instructions"]) {
      if (!isOptionalString(server[key])) return `mcp.servers[${JSON.stringify(id)}].${key} is not a string or null`;
    }
    const capabilities = server.capabilities;
    if (capabilities !== undefined && capabilities !== null && !isObject(capabilities)) {
      return `mcp.servers[${JSON.stringify(id)}].capabilities is not an object or null`;
    }
  }
  for (const list of ["tools", "prompts", "resources"] as const) {
    const items = mcp[list];
    if (!Array.isArray(items)) return `mcp.${list} is not an array`;
    for (const item of items) {
      if (!isObject(item) || typeof item.name !== "string" || typeof item.serverId !== "string") {
        return `mcp.${list} has an entry without a string name and serverId`;
      }
      if (list === "resources" && typeof item.uri !== "string") return "mcp.resources has an entry without a string uri";
    }
  }
  return undefined;
}
