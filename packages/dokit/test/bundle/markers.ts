/**
 * Strings that identify code a bundle must not contain. Each is a literal the
 * minifier keeps (error text, protocol method names, class-name strings, SQL).
 */
export const FORBIDDEN = {
  /** capnweb's own error text (src/rpc.ts). */
  capnweb: "RPC session was shut down by disposing the main stub",
  /** A JSON-RPC method name only the MCP SDK (and MCP code) spells out. */
  mcpSdk: "notifications/initialized",
  /** zod 4's core class-name string, kept by $constructor("$ZodType", …). */
  zod: "$ZodType",
  /** dokit's State table name (src/state/storage.ts). */
  dokitState: "dokit_state",
  /**
   * The Callables capability beyond the JSON-rpc part (argument schemas; src/callables/callables.ts).
   * `dokit/websockets` carries only that part, for `new WebSockets({ callables: target })`.
   */
  dokitCallables: "is not a Standard Schema",
  /** dokit's Scheduler table name (src/schedule/scheduler.ts). */
  dokitScheduler: "dokit_schedules",
  /** dokit's Queue table name (src/queue/queue.ts). */
  dokitQueue: "dokit_queue",
  /** The MCP client SDK's own error text (its Streamable HTTP client transport). */
  mcpClientSdk: "Failed to open SSE stream",
  /** dokit's McpClients registry table (src/mcp-client/registry.ts). */
  dokitMcpClient: "dokit_mcp_servers",
  /** The Inspector's close reason (src/inspector/inspector.ts). */
  dokitInspector: "Closed from the dokit inspector",
  /**
   * The storage behind getCurrentAgent() (src/lifecycle/current.ts), the one module of dokit that
   * imports node:async_hooks: a bundle that never imports getCurrentAgent() leaves it out.
   */
  dokitContext: "node:async_hooks",
  /** yjs's own warning text (the CRDT library behind dokit/yjs, an optional peer). */
  yjs: "Yjs was already imported",
  /** dokit/yjs's update table name (src/yjs/store.ts). */
  dokitYjs: "dokit_yjs_updates",
  /** croner's own error text (the cron library behind dokit/schedule). */
  croner: "CronPattern: invalid configuration format",
} as const;

