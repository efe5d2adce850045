import { DokitError, errorMessage } from "../lifecycle/errors";
import type { WebSocketsErrorCode } from "./errors";

// A dokit socket's attachment: `{ [FLAGS_KEY]: flags, user: state }`. dokit's
// flags live in a key users never see; `connection.state` is only `user`. The
// runtime limits the serialized attachment to 16,384 bytes. Beside dokit's own
// flags (FLAG_NAMES), the flags object holds the connection slots capabilities
// claim (`claims.slot(name)`), each under its own name. The capabilities that kept
// their data among the flags before slots existed claim slots of the same names,
// so an attachment written before a deploy reads the same after it.

/** The reserved key of dokit's own flags inside an attachment. */
export const FLAGS_KEY = "__dokit";
/** The runtime's limit on a serialized attachment, in bytes. */
export const ATTACHMENT_LIMIT = 16_384;

/** dokit's per-connection flags, kept in the attachment so they survive hibernation. */
export interface ConnectionFlags {
  id: string;
  /** The public id (public-id.ts), what other clients are shown; absent on connections opened before dokit recorded it (derived again when read). */
  pub?: string;
  tags: string[];
  uri: string | null;
  readonly: boolean;
  protocol: boolean;
  /** The upgrade's `Origin` header (the page that opened the connection; browsers always send it on upgrades); absent without one. */
  origin?: string;
  /** When the connection opened (ms since epoch); absent on connections opened before dokit recorded it and on Cap'n Web sessions. */
  at?: number;
}

/** dokit's own flags (the names of ConnectionFlags), which no connection slot may take. */
const FLAG_NAMES = /^(id|pub|tags|uri|readonly|protocol|origin|at)$/;

/** @returns whether `name` is one of dokit's own flags (or an inherited member), so no slot may use it */
export function isFlagName(name: string): boolean {
  return FLAG_NAMES.test(name) || name in Object.prototype;
}

/** The whole attachment of a dokit socket. */
export interface Attachment {
  [FLAGS_KEY]: ConnectionFlags;
  user: unknown;
}

// The attachment, kept on the socket object itself (a symbol-keyed own property), so it is
// deserialized at most once per wake. Not a WeakMap: the garbage collector processes every weak
// entry on each collection, which made the cost per message grow with the number of open sockets.
const CACHE = Symbol();
type Cached = { [CACHE]?: Attachment | string };

/**
 * How an attachment without user state is stored: this prefix, then the flags as JSON. A string
 * costs the runtime far less to deserialize than an object, and the flags are parsed only when
 * something reads them, so a socket's first message after a wake (an echo, a broadcast) decodes
 * nothing. An attachment with user state is stored whole, `{ __dokit: flags, user }`, the form
 * every attachment had before; sockets that hibernated with it are read as they are.
 */
const COMPACT = "\u0000dokit\u0000";

/**
 * @returns whether the socket carries dokit's attachment (else the host accepted it); the flags
 *   stay undecoded until {@link readAttachment} needs them
 */
export function isDokitSocket(ws: WebSocket): boolean {
  if ((ws as Cached)[CACHE] !== undefined) return true;
  let value: unknown;
  try {
    value = ws.deserializeAttachment();
  } catch {
    return false;
  }
  if (typeof value === "string" ? !value.startsWith(COMPACT) : value === null || typeof value !== "object" || !(FLAGS_KEY in value)) return false;
  // SAFETY: only dokit writes a string with the COMPACT prefix, or an object with the FLAGS_KEY key.
  (ws as Cached)[CACHE] = value as Attachment | string;
  return true;
}

/** @returns the socket's attachment, or `undefined` when the socket is not dokit's (the host accepted it) */
export function readAttachment(ws: WebSocket): Attachment | undefined {
  if (!isDokitSocket(ws)) return undefined;
  // SAFETY: isDokitSocket cached the attachment as it was stored.
  const cached = (ws as Cached)[CACHE] as Attachment | string;
  if (typeof cached === "object") return cached;
  // SAFETY: dokit wrote the flags after the prefix.
  const attachment: Attachment = { [FLAGS_KEY]: JSON.parse(cached.slice(COMPACT.length)) as ConnectionFlags, user: null };
  (ws as Cached)[CACHE] = attachment;
  return attachment;
}

/**
 * Stores a new socket's flags (no user state) without keeping them on the socket object. A socket
 * that nothing decorates stays as the runtime made it, so while it idles the runtime may drop its
 * JavaScript object and make a new one for its next event (WebSockets' plain accept).
 */
export function storeFlags(ws: WebSocket, flags: ConnectionFlags): void {
  ws.serializeAttachment(compact(flags));
}

/** @returns how flags without user state are stored: {@link COMPACT}, then the flags as JSON */
function compact(flags: ConnectionFlags): string {
  return COMPACT + JSON.stringify(flags);
}

/**
 * Stores a new attachment. The previous one stays in place when this throws.
 * @throws DokitError ATTACHMENT_TOO_LARGE when the runtime refuses the size, INVALID_STATE for a value it cannot clone
 */
export function writeAttachment(ws: WebSocket, next: Attachment): void {
  try {
    ws.serializeAttachment(next.user === null ? compact(next[FLAGS_KEY]) : next);
  } catch (error) {
    // The runtime throws a DataCloneError for values structured clone cannot carry, an Error over the size limit.
    const unclonable = (error as Error).name === "DataCloneError";
    throw new DokitError<WebSocketsErrorCode>(
      unclonable ? "INVALID_STATE" : "ATTACHMENT_TOO_LARGE",
      `connection state ${unclonable ? "cannot be cloned" : `does not fit the WebSocket attachment (${ATTACHMENT_LIMIT} bytes, shared with dokit's flags): keep large values in storage`}. ` +
        `The previous state is kept. (${errorMessage(error)})`,
      { cause: error },
    );
  }
  (ws as Cached)[CACHE] = next;
}
