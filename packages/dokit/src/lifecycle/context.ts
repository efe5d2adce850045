/// <reference path="../node-async-hooks.d.ts" />
import { AsyncLocalStorage } from "node:async_hooks";
import type { Connection } from "./connection";

/** What {@link getCurrentAgent} returns. Fields are `undefined` outside their scope. */
export interface CurrentAgent<Agent = unknown> {
  /** The Durable Object whose work is running. */
  agent: Agent | undefined;
  /** The connection whose message, call or handler is running. */
  connection: Connection | undefined;
  /** The request being handled (for `onConnect`, the upgrade request). */
  request: Request | undefined;
  /** Props the Worker passed through `routeAgentRequest` for this request. */
  props: Record<string, unknown> | undefined;
}

// `node:async_hooks` needs `nodejs_compat` (or `nodejs_als`) before compatibility_date
// 2026-08-04; from that date the runtime provides it without a flag (docs/lifecycle.md).
const storage = new AsyncLocalStorage<CurrentAgent>();
const none: CurrentAgent = Object.freeze({ agent: undefined, connection: undefined, request: undefined, props: undefined });

/**
 * The object, connection and request of the work that is running now: inside host
 * hooks, WebSocket handlers, callables and MCP tools.
 * @returns the current context; every field is `undefined` outside dokit work
 */
export function getCurrentAgent<Agent = unknown>(): CurrentAgent<Agent> {
  // SAFETY: the caller names the agent type it installed; the store holds that object.
  return (storage.getStore() ?? none) as CurrentAgent<Agent>;
}

/** Runs `fn` with `scope` added to the current context (internal). */
export function runInContext<R>(scope: Partial<CurrentAgent>, fn: () => R): R {
  const parent = storage.getStore();
  return storage.run({ ...none, ...parent, ...scope }, fn);
}

/** Runs `fn(...args)` inside one fixed context. */
export type ContextRunner = <R, A extends unknown[]>(fn: (...args: A) => R, ...args: A) => R;

/**
 * Builds a context once, for every event it covers (a connection's messages, within one wake):
 * entering it again costs far less than a new `run` per event, which builds a new async context
 * frame each time (in workerd, most of what a message cost over a raw object). The context is
 * frozen, so no handler can change what the next event sees.
 * @returns a function that runs its argument in that context
 */
export function contextRunner(scope: Partial<CurrentAgent>): ContextRunner {
  return storage.run(Object.freeze({ ...none, ...scope }), AsyncLocalStorage.snapshot);
}
