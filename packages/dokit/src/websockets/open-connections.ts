// Which sockets are a WebSockets's open connections: the hibernating sockets the runtime lists,
// less those the server closed (their readyState may lag), and the non-hibernating ones (Cap'n
// Web sessions) it tracks by id. The public lookups (getConnections, getConnection) are in websockets.ts.
import type { Connection } from "../lifecycle/connection";
import { closeWith, socketChangeCount } from "../lifecycle/wire";
import { isDokitSocket } from "./attachment";
import { CLOSED, COUNTED, installedOn, LIVE } from "./internal";
import type { WebSockets } from "./websockets";

const OPEN = 1;

/** @returns whether a hibernating socket is one of dokit's and open (the attachment is read, not decoded) */
export function isOpen(sockets: WebSockets, ws: WebSocket): boolean {
  return ws.readyState === OPEN && !sockets[CLOSED]?.has(ws) && isDokitSocket(ws);
}

/**
 * @returns how many connections are open. The hibernating ones are walked (each one's readyState is
 * a call into the runtime) once per change of the isolate's sockets: every accept, close and error
 * goes through dokit (wire.ts's socketsChanged), so the walk's answer holds until one happens.
 */
export function openCount(sockets: WebSockets): number {
  const at = socketChangeCount();
  let counted = sockets[COUNTED];
  if (counted?.at !== at) {
    let count = 0;
    for (const ws of installedOn(sockets).ctx.getWebSockets()) if (isOpen(sockets, ws)) count++;
    sockets[COUNTED] = counted = { at, count };
  }
  return counted.count + (sockets[LIVE]?.size ?? 0);
}

/** The non-hibernating connections (Cap'n Web sessions), optionally those with one tag. */
export function* liveWith(sockets: WebSockets, tag: string | undefined): IterableIterator<Connection> {
  const live = sockets[LIVE];
  if (!live) return;
  for (const connection of live.values()) {
    // The first entry of `tags` is the id, which is no tag.
    if (tag === undefined || connection.tags.indexOf(tag, 1) > 0) yield connection;
  }
}

/** Closes a connection from the server, which lists it as open no more. */
export function closeConnection(sockets: WebSockets, connection: Connection, code: number, reason: string): void {
  (sockets[CLOSED] ??= new WeakSet()).add(connection);
  closeWith(connection, code, reason);
}
