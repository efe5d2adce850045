// The socket owner a WebSockets claims (`claims.takeSockets`): what the lifecycle calls for a
// hibernating socket's message, close and error, for a protocol frame another capability
// broadcasts, and for a connection's frame context. The lifecycle also uses it before the
// WebSockets is attached (lifecycle/wake.ts).
import type { ConnectionSlot, FrameContext, ProtocolFrame, SlotOptions, SocketOwner } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { contextStorage, inConnectionContext } from "../lifecycle/context";
import { closeWith } from "../frames/close";
import { parseFrame } from "./parse-frame";
import { isThenable } from "../thenable/is-thenable";
import { isDokitSocket } from "./attachment";
import { asConnection, flagsOf } from "./connection";
import { connectionSlot } from "./slot";
import { dispatchFrame, observedMessage } from "./dispatch";
import { callHandlers, handlerSetsWith, nothing, runHandlers, runOnClose } from "./handlers";
import { BINARY, CLOSED, DISPATCH, GATES, HANDLERS, installedOn, OPTIONS, REFUSED } from "./internal";
import { markClosed, OPEN, serverClosed } from "./open-connections";
import { broadcastProtocol } from "./protocol-frames";
import type { ConnectionPlugin } from "./plugin";
import type { WebSockets } from "./websockets";

/** The socket owner of one WebSockets. */
type OwnerOf = SocketOwner & { of: WebSockets };

/**
 * The socket owner's methods: each WebSockets's owner is a small object with these as its
 * prototype and the capability in `of`, so building the capability (on every wake) creates
 * no closures and runs no constructor for it.
 */
const OWNER: SocketOwner = {
  message(this: OwnerOf, ws: WebSocket, message: string | ArrayBuffer): Promise<unknown> | boolean {
    const connection = asConnection(ws);
    if (!connection) return false;
    const sockets = this.of;
    // A socket the server closed (its readyState stays CLOSING, also after a wake, until the client
    // answers the close): whatever it still sends is dropped before any claim or handler.
    if (ws.readyState !== OPEN || sockets[CLOSED]?.has(ws)) return true;
    const options = sockets[OPTIONS];
    // Dropped by a plug-in that counts inbound messages (plugin.ts `drops`: a rate limit) before any
    // claim or handler sees it; a drop that closed the connection ends it here, as every close the server makes does.
    const gates = sockets[GATES];
    if (gates && dropped(gates, connection, message)) {
      if (ws.readyState !== OPEN) serverClosed(sockets, connection);
      return true;
    }
    // Someone listens on agents:message: the frame is timed and noted.
    if (sockets[DISPATCH]?.observer) return observedMessage(sockets, connection, message);
    // As dispatchMessage (dispatch.ts), one call less for most messages.
    if (typeof message === "string" && message.trimStart().charCodeAt(0) === 123 /* { */) {
      const frame = parseFrame(message);
      if (frame) return dispatchFrame(sockets, connection, message, frame) ?? true;
    }
    // No context to enter, no added handler sets, no plug-in that claims binary messages: the configured onMessage directly (as callHandlers does).
    if (sockets[HANDLERS].length === 0 && !contextStorage() && !sockets[BINARY]) {
      const pending: unknown = options.handlers?.onMessage?.(connection, message);
      return pending !== undefined && isThenable(pending) ? Promise.resolve(pending).then(nothing) : true;
    }
    return inConnectionContext(installedOn(sockets).host, connection, callHandlers, sockets, connection, message) ?? true;
  },

  async close(this: OwnerOf, ws: WebSocket, code: number, reason: string, wasClean: boolean): Promise<boolean> {
    const connection = asConnection(ws);
    if (!connection) return false;
    const sockets = this.of;
    if (sockets[REFUSED]?.has(ws)) return true; // its client never saw it open
    markClosed(sockets, ws);
    try {
      await runOnClose(sockets, connection, code, reason, wasClean);
    } finally {
      closeWith(ws, code, reason); // reciprocate the client's close with the same code
      const at = flagsOf(connection).at;
      // {"type":"disconnect","payload":{connectionId,code,reason,wasClean,durationMs?}} on agents:lifecycle
      sockets[DISPATCH]?.observer?.emit("lifecycle", installedOn(sockets), "disconnect", {
        connectionId: connection.id,
        code,
        reason,
        wasClean,
        ...(at !== undefined && { began: at }),
      });
    }
    return true;
  },

  async error(this: OwnerOf, ws: WebSocket, error: unknown): Promise<boolean> {
    const connection = asConnection(ws);
    if (!connection) return false;
    // An error ends the socket: it is open no more (whatever its readyState says).
    markClosed(this.of, ws);
    await runHandlers(this.of, connection, handlerSetsWith(this.of, "onError"), (handlers) => handlers.onError?.(connection, error));
    return true;
  },

  // Frames other capabilities broadcast (cf_agent_mcp_servers).
  protocol(this: OwnerOf, frame: ProtocolFrame): void {
    if (this.of[OPTIONS].protocol !== false) broadcastProtocol(this.of, frame);
  },

  // The flags are a FrameContext (readonly, origin).
  context(this: OwnerOf, connection: Connection): FrameContext | undefined {
    return isDokitSocket(connection) ? flagsOf(connection) : undefined;
  },

  slot<T>(this: OwnerOf, name: string, options?: SlotOptions<T>): ConnectionSlot<T> {
    return connectionSlot(this.of, name, options);
  },
};

/** @returns whether one of the plug-ins that count inbound messages dropped this one */
function dropped(gates: readonly ConnectionPlugin[], connection: Connection, message: string | ArrayBuffer): boolean {
  for (const gate of gates) if (gate.drops?.(connection, message)) return true;
  return false;
}

/** @returns the socket owner of `sockets` (one small object, no closures) */
export function socketOwner(sockets: WebSockets): SocketOwner {
  const owner: OwnerOf = Object.create(OWNER);
  owner.of = sockets;
  return owner;
}
