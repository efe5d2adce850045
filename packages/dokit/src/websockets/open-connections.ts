// Which sockets are a WebSockets's open connections: the hibernating sockets the runtime lists,
// less those the server closed (their readyState may lag), and the non-hibernating ones (Cap'n
// Web sessions) it tracks by id. The public lookups (getConnections, getConnection) are in websockets.ts.
import type { Connection } from "../lifecycle/connection";
import { closeWith, socketChangeCount } from "../lifecycle/wire";
import { isDokitSocket } from "./attachment";
import { CHANGES, CLOSED, COUNTED, installedOn, LIVE } from "./internal";
import type { WebSockets } from "./websockets";

const OPEN = 1;

/** @returns whether a hibernating socket is one of dokit's and open (the attachment is read, not decoded) */
export function isOpen(sockets: WebSockets, ws: WebSocket): boolean {
  return ws.readyState === OPEN && !sockets[CLOSED]?.has(ws) && isDokitSocket(ws);
}

/** A count of open hibernating connections, and the change counts it holds for. */
export type Counted = { count: number; isolate: number; own: number };

/** @returns the kept count, if no socket changed since it was made */
function current(sockets: WebSockets): Counted | undefined {
  const counted = sockets[COUNTED];
  return counted && counted.own === (sockets[CHANGES] ?? 0) && counted.isolate === socketChangeCount() ? counted : undefined;
}

/**
 * @returns how many connections are open. The hibernating ones are walked (each one's readyState is
 * a call into the runtime) only when the kept count is stale: every accept, close event and error
 * event of this WebSockets counts as one of its changes, and every close dokit or server code starts
 * (wire.ts's closeWith, a Connection's close) as a change of the isolate's sockets.
 */
export function openCount(sockets: WebSockets): number {
  let counted = current(sockets);
  if (!counted) {
    let count = 0;
    for (const ws of installedOn(sockets).ctx.getWebSockets()) if (isOpen(sockets, ws)) count++;
    sockets[COUNTED] = counted = { count, isolate: socketChangeCount(), own: sockets[CHANGES] ?? 0 };
  }
  return counted.count + (sockets[LIVE]?.size ?? 0);
}

/**
 * A socket of `sockets` was accepted (`opened`), or its close or error event came. An accept moves a
 * current count on by one (a flash crowd of joins walks nothing); a close or an error makes the next
 * count walk, since the socket may have left the count already (its readyState changes before its event).
 */
export function connectionsChanged(sockets: WebSockets, opened: boolean): void {
  const counted = opened ? current(sockets) : undefined;
  const own = (sockets[CHANGES] = (sockets[CHANGES] ?? 0) + 1);
  if (counted) sockets[COUNTED] = { count: counted.count + 1, isolate: counted.isolate, own };
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
