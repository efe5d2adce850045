// The socket owner a WebSockets claims (`claims.takeSockets`): what the lifecycle calls for a
// hibernating socket's message, close and error, for a protocol frame another capability
// broadcasts, and for a connection's frame context. The lifecycle also uses it before the
// WebSockets is attached (lifecycle/wake.ts).
import type { ConnectionSlot, FrameContext, ProtocolFrame, SlotOptions, SocketOwner } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { closeWith } from "../frames/close";
import { isDokitSocket } from "./attachment";
import { asConnection, flagsOf } from "./connection";
import { connectionSlot } from "./slot";
import { receive } from "./dispatch";
import { handlerSetsWith, runHandlers, runOnClose } from "./handlers";
import { DISPATCH, installedOn, OPTIONS, REFUSED } from "./internal";
import { markClosed } from "./open-connections";
import { broadcastProtocol } from "./protocol-frames";
import type { WebSockets } from "./websockets";

/** The socket owner of one WebSockets. */
type OwnerOf = SocketOwner & { of: WebSockets };

/**
 * The socket owner's methods: each WebSockets's owner is a small object with these as its
 * prototype and the capability in `of`, so building the capability (on every wake) creates
 * no closures and runs no constructor for it.
 */
const OWNER: SocketOwner = {
  // The inbound path, read whole in dispatch.ts.
  message(this: OwnerOf, ws: WebSocket, message: string | ArrayBuffer): Promise<unknown> | boolean {
    return receive(this.of, ws, message);
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

/** @returns the socket owner of `sockets` (one small object, no closures) */
export function socketOwner(sockets: WebSockets): SocketOwner {
  const owner: OwnerOf = Object.create(OWNER);
  owner.of = sockets;
  return owner;
}
