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

/**
 * Runs `fn(...args)` inside one fixed context: an `AsyncLocalStorage` snapshot. Entering it again
 * costs far less than a new `run` each time, which builds a new async context frame (in workerd,
 * most of what a message cost over a raw object). The context is frozen, so no handler can change
 * what the next event sees.
 */
type ContextRunner = <R, A extends unknown[]>(fn: (...args: A) => R, ...args: A) => R;

/** A connection's context runner, kept on the connection (a symbol-keyed property: see attachment.ts). */
const RUNNER = Symbol();
/** Marks a connection whose context ran once in this wake. */
const FIRST = 0;
type WithRunner = { [RUNNER]?: ContextRunner | typeof FIRST };

/**
 * Runs `fn(a, b, c)` in a connection's context (the object and the connection). The first time
 * in a wake it runs in a plain new context; the second builds a runner kept on the connection,
 * which enters that context again for far less than a new one each time (but costs more than
 * one plain run, so a connection that sends once per wake never builds one).
 */
export function inConnectionContext<R, A, B, C>(agent: unknown, connection: Connection, fn: (a: A, b: B, c: C) => R, a: A, b: B, c: C): R {
  const runner = (connection as WithRunner)[RUNNER];
  if (typeof runner === "function") return runner(fn, a, b, c);
  const scope: CurrentAgent = Object.freeze({ agent, connection, request: undefined, props: undefined });
  if (runner === FIRST) return ((connection as WithRunner)[RUNNER] = storage.run(scope, AsyncLocalStorage.snapshot))(fn, a, b, c);
  (connection as WithRunner)[RUNNER] = FIRST;
  return storage.run(scope, fn, a, b, c);
}
