// The events dokit publishes, by channel (docs/observability.md has the table).
// Names and payloads match the reference's where it has an equivalent
// (`connect`, `disconnect`, `destroy`, `rpc`, `rpc:error`, `state:update`,
// `schedule:*`, `queue:*`), so a subscriber written for `agents:rpc` keeps working.

/** The fields every event carries. */
export interface BaseEvent<T extends string, Payload extends object> {
  type: T;
  /** The host's class name (e.g. `"ChatRoom"`). */
  agent: string;
  /** The object's name (`ctx.id.name`, or its id string when it has none). */
  name: string;
  /** When the event was published, in ms since epoch. */
  timestamp: number;
  payload: Payload;
}

/** Where an `error` event's failure happened. */
export type ErrorWhere = "start" | "fetch" | "message" | "close" | "error" | "destroy" | "connect";

/** agents:lifecycle */
export type LifecycleEvent =
  | BaseEvent<"start", { durationMs: number }>
  /** `retryCount` and `isRetry`: the platform's alarm info, when it passes one. */
  | BaseEvent<"alarm", { durationMs: number; retryCount?: number; isRetry?: boolean }>
  | BaseEvent<"destroy", Record<string, never>>
  | BaseEvent<"connect", { connectionId: string; durationMs: number }>
  | BaseEvent<"connect:refused", { connectionId: string; where: "connect"; code: string; message: string }>
  | BaseEvent<"disconnect", { connectionId: string; code: number; reason: string; wasClean: boolean; durationMs?: number }>
  | BaseEvent<"error", { where: ErrorWhere; code: string; message: string; connectionId?: string }>
  /** A Sessions failure that did not fail its call (a compaction, a change listener); `where` names it. */
  | BaseEvent<"session:error", { where: string; code: string; message: string }>;

/** agents:message */
export type MessageEvent = BaseEvent<
  "message:dispatch",
  {
    connectionId: string;
    /** The frame's JSON `type`, or `"text"` / `"binary"` for a message that is no frame. */
    type: string;
    /** The capability whose frame claim took it (`"State"`, `"Callables"`, `"WebSockets"`), or `"onMessage"`. */
    handler: string;
    /** Characters of a text message, bytes of a binary one. */
    size: number;
    durationMs: number;
    /** The message itself, only with `includeValues()`. */
    body?: string | ArrayBuffer;
  }
>;

/** agents:rpc */
export type RpcEvent =
  | BaseEvent<"rpc", { connectionId: string; method: string; ok: boolean; durationMs: number; streaming?: true; chunks?: number }>
  | BaseEvent<
      "rpc:error",
      { connectionId: string; method: string; ok: false; durationMs: number; error: string; code?: string; streaming?: true; chunks?: number }
    >;

/** Who changed the state: the server, or a client over its connection. */
export type StateEventSource = { source: "server" } | { source: "client"; connectionId: string };

/** agents:state */
export type StateEvent =
  | BaseEvent<"state:update", StateEventSource & { size: number; state?: unknown }>
  | BaseEvent<"state:reject", StateEventSource & { code: string; size?: number }>;

/** A job's identity in schedule and queue events. */
type Job = { callback: string; id: string };

/** agents:schedule (the Scheduler's `schedule:*` and the Queue's `queue:*`) */
export type ScheduleEvent =
  | BaseEvent<"schedule:create" | "queue:create", Job>
  | BaseEvent<"schedule:cancel", { id: string }>
  | BaseEvent<"schedule:execute" | "queue:execute", Job & { attempt: number; durationMs: number }>
  | BaseEvent<"schedule:retry" | "queue:retry", Job & { attempt: number; maxAttempts: number; error: string; durationMs: number }>
  | BaseEvent<"schedule:error" | "queue:error", Job & { attempts: number; error: string; code?: string; durationMs?: number }>;

/** What `McpClients` (dokit/mcp-client) publishes about one server: the reference's `mcp:client:*` events, with `serverId` on each. */
export type McpClientEvent =
  | BaseEvent<"mcp:client:preconnect", { serverId: string }>
  | BaseEvent<"mcp:client:connect", { serverId: string; url: string; transport: string; state: string; error?: string | null }>
  | BaseEvent<"mcp:client:authorize", { serverId: string; authUrl: string; clientId?: string }>
  | BaseEvent<
      "mcp:client:discover",
      { serverId: string; url: string; state: string; error?: string | null; tools?: number; prompts?: number; resources?: number }
    >
  | BaseEvent<"mcp:client:close", { serverId: string; url: string; transport: string; state: string; error?: string | null; phase?: "client-close" }>;

/** agents:mcp */
export type McpEvent = McpClientEvent | BaseEvent<
  "mcp:request",
  {
    /** `"modern"` (2026-07-28, per-request) or `"legacy"` (2025-era sessions). */
    era: "modern" | "legacy" | "none";
    /** The JSON-RPC method of the first message (`"GET"`, `"DELETE"` for streams and session ends). */
    method: string;
    /** The tool's name, for `tools/call`. */
    tool?: string;
    /** Messages in a batch body. */
    messages: number;
    status: number;
    durationMs: number;
    sessionId?: string;
  }
>;

/** Events by channel key, as `subscribe(key, …)` receives them. */
/** agents:task (dokit/tasks: the reference's `task:*` names; `step`, `attempt`, `error`, `reason`, `wakeAt` where they apply) */
export type TaskEvent = BaseEvent<
  | "task:accepted"
  | "task:attempt:started"
  | "task:attempt:interrupted"
  | "task:step:started"
  | "task:step:retry"
  | "task:step:completed"
  | "task:waiting"
  | "task:completed"
  | "task:failed"
  | "task:cancelled"
  | "task:deleted",
  {
    runId: string;
    definition?: string;
    step?: string;
    attempt?: number;
    maxAttempts?: number;
    error?: string;
    code?: string;
    reason?: string;
    wakeAt?: number;
  }
>;

export interface ChannelEventMap {
  lifecycle: LifecycleEvent;
  message: MessageEvent;
  rpc: RpcEvent;
  state: StateEvent;
  schedule: ScheduleEvent;
  mcp: McpEvent;
  task: TaskEvent;
}

/** Every event dokit publishes: a union discriminated by `type`. */
export type ObservabilityEvent = ChannelEventMap[keyof ChannelEventMap];
