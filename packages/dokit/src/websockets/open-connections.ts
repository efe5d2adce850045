// Which sockets are a WebSockets's open connections: the hibernating sockets the runtime lists,
// less those the server closed (their readyState may lag), and the non-hibernating ones (Cap'n
// Web sessions) it tracks by id. The public lookups (getConnections, getConnection) are in websockets.ts.
import type { Connection } from "../lifecycle/connection";
import { closeWith, closeCount } from "../frames/close";
import { isDokitSocket } from "./attachment";
import { asConnection } from "./connection";
import { CLOSED, COUNTED, installedOn, LIVE, PLUGINS } from "./internal";
import type { WebSockets } from "./websockets";

/** A socket's readyState while it is open (CLOSING, 2, from the server's close until the client answers it). */
export const OPEN = 1;

/** @returns whether a hibernating socket is one of dokit's and open (the attachment is read, not decoded) */
export function isOpen(sockets: WebSockets, ws: WebSocket): boolean {
  return ws.readyState === OPEN && !sockets[CLOSED]?.has(ws) && isDokitSocket(ws);
}

/** A count of open hibernating connections, and the isolate's close count it holds for. */
export type Counted = { count: number; closes: number };

/** @returns the kept count, if it still holds (no close was started in the isolate since it was made) */
function current(sockets: WebSockets): Counted | undefined {
  const counted = sockets[COUNTED];
  return counted?.closes === closeCount() ? counted : undefined;
}

/**
 * @returns how many connections are open. The hibernating ones are walked (each one's readyState is
 * a call into the runtime) only when no kept count holds: an accept adds one to it, a close or error
 * event of this WebSockets drops it ({@link markClosed}), and a close started anywhere in the isolate
 * (frames/close.ts's closeWith, a Connection's close) makes every kept count stale.
 */
export function openCount(sockets: WebSockets): number {
  let counted = current(sockets);
  if (!counted) {
    let count = 0;
    for (const ws of installedOn(sockets).ctx.getWebSockets()) if (isOpen(sockets, ws)) count++;
    sockets[COUNTED] = counted = { count, closes: closeCount() };
  }
  return counted.count + (sockets[LIVE]?.size ?? 0);
}

/** A socket was accepted: a kept count moves on by one (a flash crowd of joins walks nothing). */
export function countAccepted(sockets: WebSockets): void {
  const counted = current(sockets);
  if (counted) counted.count++;
}

/**
 * A socket is open no more (its close or error event came, or the server closes it): it leaves the
 * open connections, and the next count walks, since it may have left a kept count already (its
 * readyState changes before its event).
 */
export function markClosed(sockets: WebSockets, ws: WebSocket): void {
  (sockets[CLOSED] ??= new WeakSet()).add(ws);
  sockets[COUNTED] = undefined;
}

/** The open hibernating connections the platform's tag index lists under a runtime tag (tags.ts), made Connections without reading their flags. */
export function* taggedSockets(sockets: WebSockets, runtimeTag: string): IterableIterator<Connection> {
  for (const ws of installedOn(sockets).ctx.getWebSockets(runtimeTag)) {
    // SAFETY: isOpen accepted only dokit sockets, which asConnection makes Connections.
    if (isOpen(sockets, ws)) yield asConnection(ws) as Connection;
  }
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
  closeWith(connection, code, reason);
  serverClosed(sockets, connection);
}

/**
 * The server closed a connection: it is open no more, and its plug-ins hear of it now. A client that
 * never answers the close sends no close event, so nothing would end it later; its messages are
 * dropped on arrival (socket-events.ts).
 */
export function serverClosed(sockets: WebSockets, connection: Connection): void {
  markClosed(sockets, connection);
  for (const plugin of sockets[PLUGINS]) plugin.closing?.(connection);
}
