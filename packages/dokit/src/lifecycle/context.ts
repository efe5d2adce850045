import type { Connection } from "./connection";

/** What `getCurrentAgent()` returns. Fields are `undefined` outside their scope. */
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

/** The context outside dokit work. */
export const NO_AGENT: CurrentAgent = Object.freeze({ agent: undefined, connection: undefined, request: undefined, props: undefined });

/**
 * Runs `fn(...args)` inside one fixed context: an `AsyncLocalStorage` snapshot. Entering it again
 * costs far less than a new `run` each time, which builds a new async context frame (in workerd,
 * most of what a message cost over a raw object). The context is frozen, so no handler can change
 * what the next event sees.
 */
type ContextRunner = <R, A extends unknown[]>(fn: (...args: A) => R, ...args: A) => R;

/** What dokit uses of the `AsyncLocalStorage` that `getCurrentAgent()` reads. */
export interface ContextStorage {
  getStore(): CurrentAgent | undefined;
  run<R, A extends unknown[]>(store: CurrentAgent, fn: (...args: A) => R, ...args: A): R;
}

/**
 * The storage behind `getCurrentAgent()`, set by `lifecycle/current.ts` when that module loads.
 * Nothing else reads the context, so until some module that can call `getCurrentAgent()` is
 * loaded no context is entered: a Worker whose bundle leaves it out (dokit's package is
 * `sideEffects: false`, so a bundler drops a module none of whose exports are used) pays
 * nothing for it per event. docs/lifecycle.md, "getCurrentAgent()".
 */
let snapshot: (() => ContextRunner) | undefined;
/** The storage, once connected, and whether work ran without it (a storage provided after that comes too late for it). */
const contextUse: { storage: ContextStorage | undefined; ranWithout: boolean } = { storage: undefined, ranWithout: false };

/**
 * For a path that runs user code without entering a context when there is none to enter (a
 * message straight to `onMessage`): the storage, or `undefined`, noting then that work ran without it.
 */
export function contextStorage(): ContextStorage | undefined {
  const storage = contextUse.storage;
  if (!storage) contextUse.ranWithout = true;
  return storage;
}

/** Connects the storage `getCurrentAgent()` reads (lifecycle/current.ts, once, as it loads). */
export function provideContext(store: ContextStorage, takeSnapshot: () => ContextRunner): void {
  if (contextUse.ranWithout) {
    console.warn(
      "dokit: getCurrentAgent() was loaded after dokit had begun handling events without it (a dynamic import?); " +
        "work that began before sees no context. Import it statically (import { getCurrentAgent } from \"dokit/lifecycle\").",
    );
  }
  contextUse.storage = store;
  snapshot = takeSnapshot;
}

/** Runs `fn` with `scope` added to the current context (internal). */
export function runInContext<R>(scope: Partial<CurrentAgent>, fn: () => R): R {
  const storage = contextUse.storage;
  if (!storage) {
    contextUse.ranWithout = true;
    return fn();
  }
  const parent = storage.getStore();
  return storage.run({ ...NO_AGENT, ...parent, ...scope }, fn);
}

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
  const storage = contextUse.storage;
  if (!storage || !snapshot) {
    contextUse.ranWithout = true;
    return fn(a, b, c);
  }
  const runner = (connection as WithRunner)[RUNNER];
  if (typeof runner === "function") return runner(fn, a, b, c);
  const scope: CurrentAgent = Object.freeze({ agent, connection, request: undefined, props: undefined });
  if (runner === FIRST) return ((connection as WithRunner)[RUNNER] = storage.run(scope, snapshot))(fn, a, b, c);
  (connection as WithRunner)[RUNNER] = FIRST;
  return storage.run(scope, fn, a, b, c);
}
