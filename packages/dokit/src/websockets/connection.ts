import type { Connection } from "../lifecycle/connection";
import { closeStarted } from "../frames/close";
import { type Attachment, FLAGS_KEY, type ConnectionFlags, isDokitSocket, readAttachment, writeAttachment } from "./attachment";
import { randomPublicId } from "./public-id";

// A Connection is the platform WebSocket itself with a few properties defined
// on it, so `connection === ws` and sends cost nothing extra.

function attachmentOf(ws: WebSocket): Attachment {
  const attachment = readAttachment(ws);
  // SAFETY: only sockets with a dokit attachment are ever decorated.
  return attachment as Attachment;
}

const descriptors: PropertyDescriptorMap = {
  id: {
    get(this: WebSocket) {
      return idOf(this);
    },
    configurable: true,
  },
  publicId: {
    get(this: WebSocket) {
      return publicIdOf(this);
    },
    configurable: true,
  },
  uri: {
    get(this: WebSocket) {
      return attachmentOf(this)[FLAGS_KEY].uri;
    },
    configurable: true,
  },
  tags: {
    get(this: WebSocket) {
      return attachmentOf(this)[FLAGS_KEY].tags;
    },
    configurable: true,
  },
  state: {
    get(this: WebSocket) {
      return attachmentOf(this).user ?? null;
    },
    configurable: true,
  },
  // The platform's close, after telling the open-connection counts (open-connections.ts) they are stale.
  close: {
    value(this: WebSocket, ...args: [code?: number, reason?: string]) {
      closeStarted();
      // SAFETY: a Connection's prototype is made on the socket's own prototype (asConnection), whose close this is.
      return (Object.getPrototypeOf(Object.getPrototypeOf(this)) as WebSocket).close.apply(this, args);
    },
    configurable: true,
  },
  setState: {
    value(this: WebSocket, next: unknown) {
      // Read the whole attachment first (also right after a wake), so the
      // internal flags are carried over and never overwritten.
      const attachment = attachmentOf(this);
      const previous = attachment.user ?? null;
      const value = typeof next === "function" ? (next as (p: unknown) => unknown)(previous) : next;
      writeAttachment(this, { [FLAGS_KEY]: attachment[FLAGS_KEY], user: value ?? null });
      return value ?? null;
    },
    configurable: true,
  },
};

/**
 * The Connection members live on one prototype between the socket and the platform's
 * WebSocket.prototype (made once per realm): a socket becomes a Connection with one
 * prototype change, on its first event after a wake, instead of five property definitions.
 */
const connectionPrototypes = new WeakMap<object, object>();

/** @returns the socket as a Connection, or `undefined` when it is not a dokit socket */
export function asConnection(ws: WebSocket): Connection | undefined {
  // Decorated already (the socket itself says so: no WeakSet, see attachment.ts)?
  if ("setState" in ws) return ws as Connection;
  if (!isDokitSocket(ws)) return undefined;
  const base: object = Object.getPrototypeOf(ws);
  let prototype = connectionPrototypes.get(base);
  if (!prototype) connectionPrototypes.set(base, (prototype = Object.create(base, descriptors) as object));
  Object.setPrototypeOf(ws, prototype);
  // SAFETY: the prototype just set carries the properties Connection adds to WebSocket.
  return ws as Connection;
}

/** @returns the connection id of a dokit socket (one that {@link isDokitSocket} accepted), without making it a Connection */
export function idOf(ws: WebSocket): string {
  return attachmentOf(ws)[FLAGS_KEY].id;
}

/**
 * @returns the public id of a dokit socket: what other clients are shown of it (public-id.ts). A
 *   socket accepted before dokit kept one gets a random one, stored with its flags when they fit.
 */
export function publicIdOf(ws: WebSocket): string {
  const attachment = attachmentOf(ws);
  const flags = attachment[FLAGS_KEY];
  if (flags.pub === undefined) {
    flags.pub = randomPublicId();
    try {
      writeAttachment(ws, attachment);
    } catch {
      // The attachment is full: the id is kept in memory until the next wake.
    }
  }
  return flags.pub;
}

/** @returns dokit's flags for a connection */
export function flagsOf(connection: Connection): ConnectionFlags {
  return attachmentOf(connection)[FLAGS_KEY];
}

/** Changes dokit's flags of a connection, keeping the user's state. */
export function updateFlags(connection: Connection, change: Partial<ConnectionFlags>): void {
  const attachment = attachmentOf(connection);
  writeAttachment(connection, { [FLAGS_KEY]: { ...attachment[FLAGS_KEY], ...change }, user: attachment.user });
}

/** Starts a socket's attachment with its flags and no user state. */
export function initConnection(ws: WebSocket, internal: ConnectionFlags): Connection {
  writeAttachment(ws, { [FLAGS_KEY]: internal, user: null });
  // SAFETY: the attachment was just written, so asConnection succeeds.
  return asConnection(ws) as Connection;
}

