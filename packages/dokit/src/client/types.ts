// Public types of `dokit/client`: options, call options and the typed stub.
import type { AgentStub, CallableName } from "../rpc/stub-types";
import type { MCPServersState } from "../protocol/mcp-client";
import type { AgentFrameError } from "./errors";
import type { AgentClientMessage } from "./binary";

export type { AgentStub };

/** Stream callbacks for a call whose method returns a `ReadableStream`. */
export interface StreamOptions {
  /** Runs for each chunk, as soon as it arrives. */
  onChunk?: (chunk: unknown) => void;
  /** Runs once when the stream ends; receives the final frame's `result` (usually `undefined`). */
  onDone?: (finalChunk: unknown) => void;
  /** Runs once when the call fails: the server's error message, a timeout or `Connection closed`. */
  onError?: (error: string) => void;
}

/** The third argument of `call()`. */
export interface CallOptions {
  /** Milliseconds before the call rejects; `0` turns the timeout off. Streaming calls have none unless set here. */
  timeout?: number;
  /** Stream callbacks; setting them marks the call as streaming. */
  stream?: StreamOptions;
}

/** How calls and frames travel: JSON frames over a hibernating WebSocket, or a Cap'n Web session. */
export type AgentTransport = "cf-websocket" | "capnweb";

/** Query parameters added to the upgrade URL; `null` and `undefined` values are left out. */
export type QueryParams = Record<string, string | null | undefined>;

/** Where the client connects and how it behaves. */
export interface AgentClientOptions<State = unknown> {
  /** The Durable Object binding or class name; kebab-cased in the URL (`RoomAgent` → `room-agent`). */
  agent: string;
  /** The object's name (default `"default"`). */
  name?: string;
  /** `host[:port]`; a leading `http(s)://` or `ws(s)://` is dropped. Defaults to `location.host` in a browser. */
  host?: string;
  /** The first path segment (default `"agents"`). */
  prefix?: string;
  /** A full path that replaces `{prefix}/{agent}/{name}` (the server routes it itself). */
  basePath?: string;
  /** A sub-path appended after the object's address; must not start with `/`. */
  path?: string;
  /** Query parameters, or a (sync or async) function evaluated before every connection attempt (fresh tokens). */
  query?: QueryParams | (() => QueryParams | Promise<QueryParams>);
  /** The connection id, sent as `_pk` and kept across reconnects (default: a random UUID). */
  id?: string;
  /** `"ws"` or `"wss"`; default `ws` for loopback and private-network hosts, `wss` otherwise. */
  protocol?: "ws" | "wss";
  /** `"cf-websocket"` (default) or `"capnweb"`. */
  transport?: AgentTransport;
  /** Timeout of non-streaming calls in milliseconds (default 30 000; `0` turns it off). */
  defaultCallTimeout?: number;
  /** Runs when the state changes: `"server"` for frames from the server (and rollbacks), `"client"` for `setState`. */
  onStateUpdate?: (state: State, source: "server" | "client") => void;
  /** Runs when the server refuses a `setState` (the state has already been rolled back). */
  onStateUpdateError?: (error: string) => void;
  /** Runs when the server says who it is, on every (re)connection. */
  onIdentity?: (name: string, agent: string) => void;
  /** Runs when the object's MCP servers or their catalogue change (`cf_agent_mcp_servers`, as with the official `useAgent`). */
  onMcpUpdate?: (mcp: MCPServersState) => void;
  /**
   * Runs when the server sent a protocol frame the client cannot read (a field of the wrong
   * type); the frame is ignored (a call it answers fails). Default: a console warning.
   */
  onFrameError?: (error: AgentFrameError) => void;
  /**
   * Runs when the server refuses a `presence.set()` value (`dokit_error` `PRESENCE_REJECTED`: too large,
   * refused by its validator, not JSON); receives the server's short reason. The server keeps the
   * previous value, and so does the client for its next reconnect. Default: a console warning.
   */
  onPresenceError?: (error: string) => void;
  /** Runs when the connection closes for good without `close()` being called. */
  onConnectionError?: (error: Error & { code: number; reason: string; wasClean: boolean }) => void;
  /**
   * Runs for every connection attempt that failed before its socket opened (nothing listening, a refused
   * handshake, `connectionTimeout`), with the next attempt's number and delay; its `message` names the URL
   * without the query. Default: one console warning per run of failed attempts (dokit).
   */
  onConnectFailure?: (error: Error & { code: number; reason: string; wasClean: boolean }, retry: { attempt: number; delayMs: number }) => void;
  /**
   * Milliseconds `ready` may wait: counted from the constructor, `reconnect()` or the loss of an identified
   * socket; when no socket is identified by then, the client stops as for a final close (`onConnectionError`,
   * `ready` rejects with `dokit: not connected within <ms> ms` and the last failure). Default: off, retry forever (dokit).
   */
  readyTimeout?: number;
  /** Do not connect until `reconnect()` is called. */
  startClosed?: boolean;
  /** Smallest reconnect delay in milliseconds (default 1 000; each delay is jittered down to half). */
  minReconnectionDelay?: number;
  /** Largest reconnect delay in milliseconds (default 10 000). */
  maxReconnectionDelay?: number;
  /** Growth factor of the reconnect delay per failed attempt (default 1.3). */
  reconnectionDelayGrowFactor?: number;
  /** Reconnect attempts before giving up (default unlimited). */
  maxRetries?: number;
  /** Milliseconds a connection attempt may take before it is abandoned and retried (default 4 000). */
  connectionTimeout?: number;
  /**
   * Pings the server to find a dead link: when a ping gets no answer in time, the socket is closed
   * and the client reconnects. Only for servers that answer pings (a dokit `WebSockets` with
   * `heartbeat` set; others get each ping as a message). `true`: the defaults. Default off.
   * JSON transport only.
   */
  heartbeat?: boolean | HeartbeatClientOptions;
  /** Most messages and calls kept while the socket is down (default 100); beyond it the oldest is dropped. */
  maxQueuedMessages?: number;
  /** Most bytes of messages kept while the socket is down (default 1 MiB); beyond it the oldest are dropped. */
  maxQueuedBytes?: number;
  /**
   * Runs for each message dropped from the full queue (a dropped call rejects instead).
   * Default: a console warning.
   */
  onMessageDropped?: (message: AgentClientMessage) => void;
}

/** The `heartbeat` option of `AgentClient`. */
export interface HeartbeatClientOptions {
  /** Milliseconds between pings on an open socket (default 25 000). */
  intervalMs?: number;
  /** Milliseconds a ping may go unanswered before the socket counts as dead (default 10 000). */
  timeoutMs?: number;
  /** The ping text (default `"dokit:ping"`; must match the server's). */
  ping?: string;
  /** The pong text (default `"dokit:pong"`; must match the server's). */
  pong?: string;
}

/**
 * What `updateProperties()` changes for the next connection attempt: the
 * address, the query, the id and the reconnect tuning. `room` and `party`
 * are the official client's (PartySocket's) names for `name` and `agent`.
 */
export type AgentClientProperties = Partial<
  Pick<
    AgentClientOptions,
    | "agent"
    | "name"
    | "host"
    | "prefix"
    | "basePath"
    | "path"
    | "query"
    | "id"
    | "protocol"
    | "minReconnectionDelay"
    | "maxReconnectionDelay"
    | "reconnectionDelayGrowFactor"
    | "maxRetries"
    | "connectionTimeout"
  >
> & {
  /** The object's name, as PartySocket calls it (same as `name`). */
  room?: string;
  /** The agent's URL segment, as PartySocket calls it (same as `agent`). */
  party?: string;
};

// ── Typed stub ──────────────────────────────────────────────────────

/** The string keys of `T` whose values are functions (the names `AgentStub<T>` offers). */
export type CallableKeys<T> = CallableName<T>;

/** A stub without a callables type: any method name, any arguments. */
export type UntypedAgentStub = Record<string, (...args: unknown[]) => Promise<unknown>>;

/** The stub type for `T`: typed when `T` has methods, untyped otherwise. */
export type AgentClientStub<T> = [CallableKeys<T>] extends [never] ? UntypedAgentStub : AgentStub<T>;

/** The arguments of method `K` of `T`. */
export type MethodArgs<T, K extends keyof T> = T[K] extends (...args: infer A) => unknown ? A : never;
/** The awaited result of method `K` of `T`. */
export type MethodResult<T, K extends keyof T> = T[K] extends (...args: never[]) => infer R ? Awaited<R> : never;

/** `call()`: typed by method name when `T` has methods, untyped otherwise. */
export type AgentCall<T> = [CallableKeys<T>] extends [never]
  ? <R = unknown>(method: string, args?: unknown[], options?: CallOptions | StreamOptions) => Promise<R>
  : <K extends CallableKeys<T>>(
      method: K,
      args: MethodArgs<T, K>,
      options?: CallOptions | StreamOptions,
    ) => Promise<MethodResult<T, K>>;
