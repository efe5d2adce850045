export { useAgent } from "./use-agent";
export type { UseAgentOptions, UseAgentResult } from "./use-agent";
export type { ClientSnapshot } from "./snapshot";
export type { AgentStub, AgentClientOptions, CallOptions, StreamOptions } from "../client/types";
