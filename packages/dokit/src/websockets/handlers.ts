// The handler sets of a WebSockets: those added with `use()`, in order, then the configured one.
// `onConnect`, `onClose` and `onError` run every set that defines them, in the connection's
// invocation context; the plug-ins (plugin.ts) run first, as handler sets. The `onMessage` chain is
// part of the inbound path (dispatch.ts).
import type { Connection } from "../lifecycle/connection";
import { type CurrentAgent, runInContext } from "../lifecycle/context";
import { HANDLERS, installedOn, OPTIONS, PLUGINS } from "./internal";
import type { WebSocketHandlers } from "./options";
import type { WebSockets } from "./websockets";

/**
 * @returns the handler sets that define `name` (never `onMessage`): the plug-ins (plugin.ts), those
 *   added with use(), in order, then the configured one
 */
export function handlerSetsWith(sockets: WebSockets, name: Exclude<keyof WebSocketHandlers, "onMessage">): WebSocketHandlers[] {
  return [...sockets[PLUGINS], ...sockets[HANDLERS], sockets[OPTIONS].handlers].filter((handlers): handlers is WebSocketHandlers => !!handlers?.[name]);
}

/**
 * Calls each of `sets` (from handlerSetsWith) in order, in the connection's invocation context
 * (entered only when there is one to call).
 */
export function runHandlers(
  sockets: WebSockets,
  connection: Connection,
  sets: readonly WebSocketHandlers[],
  call: (handlers: WebSocketHandlers) => unknown,
  request?: Request,
): Promise<void> | undefined {
  if (!sets.length) return;
  const scope: Partial<CurrentAgent> = { agent: installedOn(sockets).host, connection };
  if (request) scope.request = request;
  return runInContext(scope, async () => {
    for (const handlers of sets) await call(handlers);
  });
}

/** Runs the plug-ins' `close` hooks, then the `onClose` handlers. */
export function runOnClose(sockets: WebSockets, connection: Connection, code: number, reason: string, wasClean: boolean): Promise<void> | undefined {
  return runHandlers(sockets, connection, handlerSetsWith(sockets, "onClose"), (handlers) => handlers.onClose?.(connection, code, reason, wasClean));
}
