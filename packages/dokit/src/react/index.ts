export { useAgent } from "./use-agent";
export type { UseAgentOptions, UseAgentResult } from "./use-agent";
export { usePresence } from "./use-presence";
export type { UsePresenceResult } from "./use-presence";
export type { PresenceChange, PresenceEntry } from "../client/presence";
export type { ClientSnapshot } from "./snapshot";
export type { AgentStub, AgentClientOptions, CallOptions, StreamOptions } from "../client/types";
