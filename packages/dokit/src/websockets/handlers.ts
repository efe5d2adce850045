// The handler sets of a WebSockets: those added with `use()`, in order, then the configured one.
// `onConnect`, `onClose` and `onError` run every set that defines them, in the connection's
// invocation context; `onMessage` is a chain in which an added set returning `true` claims the message.
// The plug-ins (plugin.ts) run first: their `onConnect`, `onClose` and `onError` as handler sets,
// and their `binary` claims ahead of the `onMessage` chain.
import type { Connection } from "../lifecycle/connection";
import { type CurrentAgent, inConnectionContext, runInContext } from "../lifecycle/context";
import { isThenable } from "../thenable/is-thenable";
import { BINARY, HANDLERS, installedOn, OPTIONS, PLUGINS } from "./internal";
import type { WebSocketHandlers } from "./options";
import type { WebSockets } from "./websockets";

export const nothing = () => {};

/**
 * @returns the handler sets that define `name` (never `onMessage`): the plug-ins (plugin.ts), those
 *   added with use(), in order, then the configured one
 */
export function handlerSetsWith(sockets: WebSockets, name: Exclude<keyof WebSocketHandlers, "onMessage">): WebSocketHandlers[] {
  return [...sockets[PLUGINS], ...sockets[HANDLERS], sockets[OPTIONS].handlers].filter((handlers): handlers is WebSocketHandlers => !!handlers?.[name]);
}

/** @returns whether a plug-in claimed a binary message (plugin.ts `binary`): then no handler sees it */
function claimedBinary(sockets: WebSockets, connection: Connection, message: ArrayBuffer): boolean {
  for (const plugin of sockets[PLUGINS]) if (plugin.binary?.(connection, message) === true) return true;
  return false;
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

/**
 * The `onMessage` chain, in the connection's context: added sets first (one returning `true`
 * claims the message), then the configured one. Without added sets a synchronous handler is
 * called without a promise.
 * @returns a promise when a handler is asynchronous, else `undefined`
 */
export function toHandlers(sockets: WebSockets, connection: Connection, message: string | ArrayBuffer): Promise<void> | undefined {
  return inConnectionContext(installedOn(sockets).host, connection, callHandlers, sockets, connection, message);
}

/** The `onMessage` chain inside the context (see toHandlers). */
export function callHandlers(sockets: WebSockets, connection: Connection, message: string | ArrayBuffer): Promise<void> | undefined {
  if (typeof message !== "string" && sockets[BINARY] && claimedBinary(sockets, connection, message)) return undefined;
  if (sockets[HANDLERS].length > 0) return toAddedHandlers(sockets, connection, message);
  const pending: unknown = sockets[OPTIONS].handlers?.onMessage?.(connection, message);
  return pending !== undefined && isThenable(pending) ? Promise.resolve(pending).then(nothing) : undefined;
}

async function toAddedHandlers(sockets: WebSockets, connection: Connection, message: string | ArrayBuffer): Promise<void> {
  for (const handlers of sockets[HANDLERS]) {
    if ((await handlers.onMessage?.(connection, message)) === true) return;
  }
  await sockets[OPTIONS].handlers?.onMessage?.(connection, message);
}
