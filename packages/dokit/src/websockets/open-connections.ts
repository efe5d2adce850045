// Which sockets are a WebSockets's open connections: the hibernating sockets the runtime lists,
// less those the server closed (their readyState may lag), and the non-hibernating ones (Cap'n
// Web sessions) it tracks by id. The public lookups (getConnections, getConnection) are in websockets.ts.
import type { Connection } from "../lifecycle/connection";
import { closeWith } from "../lifecycle/wire";
import { isDokitSocket } from "./attachment";
import { CLOSED, LIVE } from "./internal";
import type { WebSockets } from "./websockets";

const OPEN = 1;

/** @returns whether a hibernating socket is one of dokit's and open (the attachment is read, not decoded) */
export function isOpen(sockets: WebSockets, ws: WebSocket): boolean {
  return ws.readyState === OPEN && !sockets[CLOSED]?.has(ws) && isDokitSocket(ws);
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
