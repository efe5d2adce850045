// Small wire helpers two or more capabilities need: parsing a frame, sending
// without caring whether the socket closed meanwhile, closing with a code the
// platform accepts, recognising upgrades, normalising claimed routes.
import { RESERVED_CLOSE_CODES } from "../protocol/frames";

/** Something frames are sent on: a Connection, a WebSocket. */
interface Sendable {
  send(message: string | ArrayBuffer | ArrayBufferView): void;
}

/** @returns `text` parsed when it is a JSON object (not null, not an array), else `undefined` */
export function parseObject(text: string): Record<string, unknown> | undefined {
  // Only text that starts with `{` can be an object: skip the parse for anything else.
  if (text.trimStart().charCodeAt(0) !== 123 /* { */) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    // SAFETY: JSON text that starts with `{` and parses is an object.
    return value as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** Closes started on this isolate's sockets so far, by dokit or by server code (see {@link closeStarted}). */
let closes = 0;

/**
 * A close was started on a socket whose owner is not known here (closeWith, a Connection's close):
 * every kept count of open sockets in the isolate is stale (websockets/open-connections.ts).
 */
export function closeStarted(): void {
  closes++;
}

/** @returns how many closes were started on this isolate's sockets */
export function closeCount(): number {
  return closes;
}

/** Sends unless the socket has closed meanwhile (its close event cleans up). @returns whether it was sent */
export function trySend(socket: Sendable, payload: string | ArrayBuffer | ArrayBufferView): boolean {
  try {
    socket.send(payload);
    return true;
  } catch {
    return false;
  }
}

/**
 * Closes `socket` with `code` and `reason`, or without a code for the codes no
 * endpoint may send (1005, 1006, 1015); ignores a socket that is already closed.
 */
export function closeWith(socket: WebSocket, code: number, reason: string): void {
  closeStarted();
  try {
    if (RESERVED_CLOSE_CODES.has(code)) socket.close();
    else socket.close(code, reason);
  } catch {
    // Already closed (the runtime may have answered the client's close itself).
  }
}

/** @returns whether `request` asks for a WebSocket upgrade */
export function isUpgrade(request: Request): boolean {
  return request.headers.get("Upgrade")?.toLowerCase() === "websocket";
}

/** @returns `path` without a trailing slash (except the root `/`), the form routes are claimed and looked up in */
export function normalizeRoute(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}
