/// <reference path="../node-async-hooks.d.ts" />
// `getCurrentAgent()` and the storage it reads. Kept apart from context.ts, which enters the
// context: loading this module is what turns the context on (see `provideContext`), so a Worker
// whose bundle never includes it enters none. That is dokit's one effect at import time, on
// purpose, and it writes only context.ts's own variables, never a global.
import { AsyncLocalStorage } from "node:async_hooks";
import { type CurrentAgent, NO_AGENT, provideContext } from "./context";

// `node:async_hooks` needs `nodejs_compat` (or `nodejs_als`) before compatibility_date
// 2026-08-04; from that date the runtime provides it without a flag (docs/lifecycle.md).
const storage = new AsyncLocalStorage<CurrentAgent>();
provideContext(storage, AsyncLocalStorage.snapshot);

/**
 * The object, connection and request of the work that is running now: inside host
 * hooks, WebSocket handlers, callables and MCP tools.
 * @returns the current context; every field is `undefined` outside dokit work
 */
export function getCurrentAgent<Agent = unknown>(): CurrentAgent<Agent> {
  // SAFETY: the caller names the agent type it installed; the store holds that object.
  return (storage.getStore() ?? NO_AGENT) as CurrentAgent<Agent>;
}
