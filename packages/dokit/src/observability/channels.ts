// The diagnostics channels, opened once per isolate (the runtime keeps one
// channel object per name, so a subscriber that calls
// `diagnostics_channel.subscribe("agents:rpc", …)` itself receives the same events).
//
// The module comes from `process.getBuiltinModule`, not an `import`: a static
// import of `node:diagnostics_channel` makes a Worker without `nodejs_compat`
// and with a compatibility date before 2026-08-04 (`nodejs_als` only, which
// dokit supports) fail to start. Where the runtime lacks the module there are
// no channels, and nothing is ever published.

/** The part of a diagnostics channel dokit uses. */
export interface EventChannel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
  subscribe(listener: (message: unknown, name: string | symbol) => void): void;
  unsubscribe(listener: (message: unknown, name: string | symbol) => void): boolean;
}

/** The channels events go to (`agents:<key>`), by the key publishers name them with. */
export type EventChannelKey = "lifecycle" | "state" | "rpc" | "message" | "schedule" | "mcp" | "task";

/** Channel names by key, as the reference's `channels` object names them. */
export const CHANNELS = {
  lifecycle: "agents:lifecycle",
  state: "agents:state",
  rpc: "agents:rpc",
  message: "agents:message",
  schedule: "agents:schedule",
  mcp: "agents:mcp",
  task: "agents:task",
} as const satisfies Record<EventChannelKey, string>;

// SAFETY: `process.getBuiltinModule` returns the runtime's node:diagnostics_channel module, whose `channel(name)` returns a Channel.
const diagnostics = (
  globalThis as { process?: { getBuiltinModule?(id: string): { channel(name: string): EventChannel } | undefined } }
).process?.getBuiltinModule?.("node:diagnostics_channel");

/** The channel objects by key; empty where the runtime has no node:diagnostics_channel. */
export const channels: Partial<Record<EventChannelKey, EventChannel>> = diagnostics
  ? Object.fromEntries(Object.entries(CHANNELS).map(([key, name]) => [key, diagnostics.channel(name)]))
  : {};
