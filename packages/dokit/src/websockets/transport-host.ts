// The handle a transport plug-in (the Cap'n Web transport, dokit/capnweb) gets from a WebSockets
// through the door (plugin.ts `transport()`): what it needs to accept, list and serve its own non-hibernating connections
// the way a hibernating socket is, never public members of WebSockets.
import { connectionFlags, connectionId, decide, greet, replaceSocket } from "./accept";
import { initConnection, updateFlags } from "./connection";
import { dispatchMessage } from "./dispatch";
import { handlerSetsWith, runOnClose } from "./handlers";
import { dispatchOf, installedOn, LIVE } from "./internal";
import type { TransportHost } from "./options";
import { derivePublicId } from "./public-id";
import type { WebSockets } from "./websockets";

/** @returns the handle of `sockets` for its transport plug-ins (made on the first upgrade one takes; its live connections are tracked from then on) */
export function transportHost(sockets: WebSockets): TransportHost {
  const live = (sockets[LIVE] ??= new Map());
  return {
    lifecycle: installedOn(sockets),
    dispatch: dispatchOf(sockets),
    track: (connection) => live.set(connection.id, connection),
    untrack: (connection) => live.get(connection.id) === connection && live.delete(connection.id),
    find: (id) => live.get(id),
    connectionId,
    replaceSocket: (id) => replaceSocket(sockets, id),
    connection: (socket, id, request) => initConnection(socket, connectionFlags(id, undefined, request)),
    // The public id first (a hash, awaited), as a hibernating socket has it from its accept.
    decide: async (connection, ctx) => {
      updateFlags(connection, { pub: await derivePublicId(connection.id) });
      return decide(sockets, connection, ctx);
    },
    greet: (connection, ctx) => greet(sockets, connection, ctx, false, handlerSetsWith(sockets, "onConnect")),
    receive: (connection, message) => dispatchMessage(sockets, connection, message),
    close: (connection, code, reason, wasClean) => runOnClose(sockets, connection, code, reason, wasClean),
  };
}
