// The inbound path: one message on a WebSockets's connection, from the socket owner's `message`
// (what the lifecycle's `webSocketMessage` calls: socket-events.ts) to whoever takes it, read top
// to bottom in this file:
//
//   receive          a socket the server closed, or one over its rate limit: dropped here;
//                    someone listening on agents:message: observedMessage times it and notes who took it
//   dispatchMessage  text that parses as a frame goes to dispatchFrame, everything else to toHandlers
//   dispatchFrame    the claim for its `type` (claimOf: the table; an object that waits to be wired
//                    after a wake is wired first when the class's claim of the type said it needs that);
//                    a claim that declines it, or none, passes it to toHandlers
//   toHandlers       a plug-in's `binary` claim (Yjs), then the `onMessage` chain: the sets added
//                    with use(), in order (one returning `true` takes it), then the configured one
//
// Cap'n Web sessions (transport-host.ts) enter at dispatchMessage.
import type { FrameClaim } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { contextStorage, inConnectionContext } from "../lifecycle/context";
import { type Wakeable, WAITING } from "../lifecycle/wake";
import { isThenable } from "../thenable/is-thenable";
import { parseFrame } from "./parse-frame";
import { RPC } from "../protocol/agents";
import { answerUnclaimedRpc } from "../rpc/serve-rpc";
import { asConnection, flagsOf } from "./connection";
import { BINARY, CLOSED, DISPATCH, GATES, HANDLERS, installedOn, OPTIONS, PLUGINS } from "./internal";
import type { ConnectionPlugin } from "./plugin";
import { OPEN, serverClosed } from "./open-connections";
import type { WebSockets } from "./websockets";

/** What a `message:dispatch` event reports of a message: its frame type and the capability or handler that took it. */
type FrameNote = { type: string; handler: string };

const nothing = () => {};

/**
 * A hibernating socket's message (the socket owner's `message`).
 * @returns `false` for a socket that is not dokit's (the host's own), a promise while a claim or
 *   handler is asynchronous, else `true`
 */
export function receive(sockets: WebSockets, ws: WebSocket, message: string | ArrayBuffer): Promise<unknown> | boolean {
  const connection = asConnection(ws);
  if (!connection) return false;
  // A socket the server closed (its readyState stays CLOSING, also after a wake, until the client
  // answers the close): whatever it still sends is dropped before any claim or handler.
  if (ws.readyState !== OPEN || sockets[CLOSED]?.has(ws)) return true;
  // Dropped by a plug-in that counts inbound messages (plugin.ts `drops`: a rate limit) before any
  // claim or handler sees it; a drop that closed the connection ends it here, as every close the server makes does.
  const gates = sockets[GATES];
  if (gates && dropped(gates, connection, message)) {
    if (ws.readyState !== OPEN) serverClosed(sockets, connection);
    return true;
  }
  // Someone listens on agents:message: the message is timed and noted.
  if (sockets[DISPATCH]?.observer) return observedMessage(sockets, connection, message);
  return dispatchMessage(sockets, connection, message) ?? true;
}

/** @returns whether one of the plug-ins that count inbound messages dropped this one */
function dropped(gates: readonly ConnectionPlugin[], connection: Connection, message: string | ArrayBuffer): boolean {
  for (const gate of gates) if (gate.drops?.(connection, message)) return true;
  return false;
}

/** A message while someone listens on agents:message: a note of the frame type and the handler that takes it. */
async function observedMessage(sockets: WebSockets, connection: Connection, message: string | ArrayBuffer): Promise<void> {
  const observer = sockets[DISPATCH]?.observer;
  const began = observer?.since("message");
  if (!observer || !began) return dispatchMessage(sockets, connection, message);
  const note: FrameNote = { type: "", handler: "onMessage" };
  await dispatchMessage(sockets, connection, message, note);
  const text = typeof message === "string";
  observer.emit("message", installedOn(sockets), "message:dispatch", {
    connectionId: connection.id,
    type: note.type || (text ? "text" : "binary"),
    handler: note.handler,
    size: text ? message.length : message.byteLength,
    began,
    ...(observer.values && { body: message }),
  });
}

/**
 * Dispatches one incoming message: a frame to its claim (dispatchFrame), everything else to the
 * handlers (toHandlers). Handlers and claims run in the connection's context (`inConnectionContext`);
 * the parsing and the lookup do not need it.
 * @returns a promise while a handler or claim is asynchronous, else `undefined`
 */
export function dispatchMessage(sockets: WebSockets, connection: Connection, message: string | ArrayBuffer, note?: FrameNote): Promise<void> | undefined {
  // Only text that starts with `{` can be a frame (parseFrame checks it too; a message that is not one skips the call).
  if (typeof message === "string" && message.trimStart().charCodeAt(0) === 123 /* { */) {
    const frame = parseFrame(message);
    if (frame) return dispatchFrame(sockets, connection, message, frame, note);
  }
  return toHandlers(sockets, connection, message);
}

/**
 * A parsed frame: to the capability that claimed its type, else to the handlers. A claim that
 * answers synchronously (an rpc call of a synchronous method) is handled without a promise.
 */
function dispatchFrame(
  sockets: WebSockets,
  connection: Connection,
  message: string,
  frame: Record<string, unknown> & { type: string },
  note?: FrameNote,
): Promise<void> | undefined {
  if (note) note.type = frame.type;
  const claim = claimOf(sockets, frame.type);
  if (claim) {
    const flags = flagsOf(connection);
    if (!claim.protocolOnly || (sockets[OPTIONS].protocol !== false && flags.protocol)) {
      // The flags carry `readonly` (a FrameContext) without an allocation per frame.
      const handled = claim.ownContext
        ? claim.handler(connection, frame, flags)
        : inConnectionContext(installedOn(sockets).host, connection, claim.handler, connection, frame, flags);
      if (isThenable(handled)) return afterClaim(sockets, handled, claim.owner, connection, message, note);
      if (handled !== false) return void (note && (note.handler = claim.owner));
    }
  } else if (frame.type === RPC && answerUnclaimedRpc(connection, frame, installedOn(sockets).host)) {
    // {"type":"rpc",…} with no Callables installed: answered, so client calls never hang.
    return void (note && (note.handler = "WebSockets"));
  }
  return toHandlers(sockets, connection, message);
}

/**
 * @returns the claim for a frame type, from the table. An object that waits to be wired after a wake
 *   (lifecycle/wake.ts) is wired first when the class's claim of the type declared it needs that
 *   (`needsWiring`); for any other type it stays as it is, and no claim is found
 */
export function claimOf(sockets: WebSockets, type: string): FrameClaim | undefined {
  const waiting = !sockets[DISPATCH] && (sockets as Wakeable)[WAITING];
  if (waiting && waiting.frames.includes(type)) waiting.wire();
  return sockets[DISPATCH]?.frame(type);
}

/** An asynchronous claim's answer: `false` (declined) passes the message on to the handlers. */
async function afterClaim(sockets: WebSockets, handled: PromiseLike<unknown>, owner: string, connection: Connection, message: string, note?: FrameNote): Promise<void> {
  if ((await handled) !== false) return void (note && (note.handler = owner));
  await toHandlers(sockets, connection, message);
}

/**
 * A message no claim took: a plug-in's binary claim, then the `onMessage` chain, in the
 * connection's context. With no plug-in claiming binary messages, no added handler set and no
 * context to enter, the configured `onMessage` is called directly, without a promise when it is synchronous.
 * @returns a promise when a handler is asynchronous, else `undefined`
 */
function toHandlers(sockets: WebSockets, connection: Connection, message: string | ArrayBuffer): Promise<void> | undefined {
  if (sockets[HANDLERS].length === 0 && !sockets[BINARY] && !contextStorage()) return toConfigured(sockets, connection, message);
  return inConnectionContext(installedOn(sockets).host, connection, callHandlers, sockets, connection, message);
}

/** The binary claims and the `onMessage` chain inside the connection's context (see toHandlers). */
function callHandlers(sockets: WebSockets, connection: Connection, message: string | ArrayBuffer): Promise<void> | undefined {
  if (typeof message !== "string" && sockets[BINARY] && claimedBinary(sockets, connection, message)) return undefined;
  if (sockets[HANDLERS].length > 0) return toAddedHandlers(sockets, connection, message);
  return toConfigured(sockets, connection, message);
}

/** @returns whether a plug-in claimed a binary message (plugin.ts `binary`): then no handler sees it */
function claimedBinary(sockets: WebSockets, connection: Connection, message: ArrayBuffer): boolean {
  for (const plugin of sockets[PLUGINS]) if (plugin.binary?.(connection, message) === true) return true;
  return false;
}

async function toAddedHandlers(sockets: WebSockets, connection: Connection, message: string | ArrayBuffer): Promise<void> {
  for (const handlers of sockets[HANDLERS]) {
    if ((await handlers.onMessage?.(connection, message)) === true) return;
  }
  await sockets[OPTIONS].handlers?.onMessage?.(connection, message);
}

/** The configured `onMessage`: a promise only when it returned one. */
function toConfigured(sockets: WebSockets, connection: Connection, message: string | ArrayBuffer): Promise<void> | undefined {
  const pending: unknown = sockets[OPTIONS].handlers?.onMessage?.(connection, message);
  return pending !== undefined && isThenable(pending) ? Promise.resolve(pending).then(nothing) : undefined;
}
