// Message dispatch: a text frame is parsed once and its `type` looked up in the dispatch table,
// so the capability that claimed it takes it; everything else goes to the `onMessage` chain
// (handlers.ts). The socket owner's `message` (socket-events.ts) does the same inline for a
// hibernating socket's message; Cap'n Web's pipe and observed messages come here.
import type { Connection } from "../lifecycle/connection";
import { inConnectionContext } from "../lifecycle/context";
import { isThenable } from "../thenable/is-thenable";
import { parseFrame } from "./parse-frame";
import { RPC, STATE } from "../protocol/agents";
import { answerUnclaimedRpc } from "../rpc/serve-rpc";
import { flagsOf } from "./connection";
import { toHandlers } from "./handlers";
import { DISPATCH, installedOn, OPTIONS, tableOf } from "./internal";
import type { WebSockets } from "./websockets";

/** What a `message:dispatch` event reports of a message: its frame type and the capability or handler that took it. */
type FrameNote = { type: string; handler: string };

/** A message while someone listens on agents:message: a note of the frame type and the handler that takes it. */
export async function observedMessage(sockets: WebSockets, connection: Connection, message: string | ArrayBuffer): Promise<void> {
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
 * handler chain. Handlers and claims run in the connection's context (`inConnectionContext`);
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
export function dispatchFrame(
  sockets: WebSockets,
  connection: Connection,
  message: string,
  frame: Record<string, unknown> & { type: string },
  note?: FrameNote,
): Promise<void> | undefined {
  if (note) note.type = frame.type;
  // Not attached yet: only the frame types dokit's capabilities claim need the table (lifecycle/wake.ts).
  const claim = sockets[DISPATCH] || frame.type === STATE || frame.type === RPC ? tableOf(sockets).frame(frame.type) : undefined;
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

/** An asynchronous claim's answer: `false` (declined) passes the message on to the handlers. */
async function afterClaim(sockets: WebSockets, handled: PromiseLike<unknown>, owner: string, connection: Connection, message: string, note?: FrameNote): Promise<void> {
  if ((await handled) !== false) return void (note && (note.handler = owner));
  await toHandlers(sockets, connection, message);
}
