import type { Connection } from "../lifecycle/connection";
import type { ConnectionSlot, Dispatch, FrameContext } from "../lifecycle/capability";
import { DokitError, errorMessage } from "../lifecycle/errors";
import { trySend } from "../frames/send";
import {
  DEFAULT_PAGE_BYTES,
  DEFAULT_PAGE_MESSAGES,
  MAX_PAGE_BYTES,
  MAX_PAGE_MESSAGES,
  MAX_SESSION_ID_LENGTH,
  MAX_WATCHED_SESSIONS,
  SESSION,
  SESSION_FORBIDDEN,
  SESSION_REJECTED,
  SESSION_TOO_LARGE,
  type SessionErrorFrame,
  type SessionServerFrame,
  type WireSessionEvent,
} from "../protocol/sessions";
import type { Session } from "./handle";
import type { SessionStore } from "./store";
import type { SessionAccess, SessionChangeEvent, SessionMessage } from "./types";

// Live history: a session's messages reach the object's WebSocket clients. A connection asks for pages
// of a path (newest first) and watches sessions; each committed write then goes out, as one `event`
// frame, to the connections watching its session. Which sessions a connection watches lives in its
// attachment (the connection slot `sessions`), so watching survives hibernation.

/** What live history needs of its Sessions. */
export interface LiveSource {
  session(sessionId: string): Session;
  store(): SessionStore;
}

/** The longest request id a client may send. */
const MAX_REQUEST_ID = 128;

/** Serves `dokit_session` frames and sends watched sessions' changes. */
export class LiveHistory {
  readonly #source: LiveSource;
  readonly #access: SessionAccess | undefined;
  /** The object's dispatch table, set when Sessions is attached. */
  dispatch: Dispatch | undefined;
  /** The sessions each connection watches (the connection slot `sessions`), claimed when first used. */
  #slot: ConnectionSlot<string[]> | undefined;

  constructor(source: LiveSource, access: SessionAccess | undefined) {
    this.#source = source;
    this.#access = access;
  }

  /** Sends a committed change to every connection watching its session. */
  broadcast(dispatch: Dispatch, event: SessionChangeEvent): void {
    let frame: string | undefined;
    const session = event.sessionId;
    dispatch.broadcastProtocol((connection) => {
      if (!this.#watched().get(connection)?.includes(session)) return undefined;
      frame ??= JSON.stringify({ type: SESSION, op: "event", session, event: toWire(event) } satisfies SessionServerFrame);
      return frame;
    });
  }

  /** One `{"type":"dokit_session",…}` frame from a client; always handled (a malformed one is refused). */
  async receive(connection: Connection, frame: Record<string, unknown>, context: FrameContext): Promise<boolean> {
    const { op, session } = frame;
    const id = typeof frame.id === "string" && frame.id.length <= MAX_REQUEST_ID ? frame.id : undefined;
    if (typeof session !== "string" || session.length > MAX_SESSION_ID_LENGTH) {
      return refuse(connection, SESSION_REJECTED, `session must be a string of at most ${MAX_SESSION_ID_LENGTH} characters`, id);
    }
    const needsId = op === "page" || op === "append" || op === "update";
    if (needsId && id === undefined) return refuse(connection, SESSION_REJECTED, `"${String(op)}" needs an id: a string of at most ${MAX_REQUEST_ID} characters`, undefined, session);
    const access = this.#allowed(connection, session, context.readonly);
    switch (op) {
      case "watch":
        if (!access) return refuse(connection, SESSION_FORBIDDEN, "This connection may not read this session", undefined, session);
        return this.#watch(connection, session, true);
      case "unwatch":
        return this.#watch(connection, session, false);
      case "page":
        if (!access) return refuse(connection, SESSION_FORBIDDEN, "This connection may not read this session", id, session);
        return this.#page(connection, session, id as string, frame);
      case "append":
      case "update":
        if (access !== "write") return refuse(connection, SESSION_FORBIDDEN, context.readonly ? "Connection is readonly" : "This connection may not write this session", id, session);
        return this.#write(connection, session, id as string, op, frame);
      default:
        return refuse(connection, SESSION_REJECTED, 'op must be "watch", "unwatch", "page", "append" or "update"', id, session);
    }
  }

  /** @returns the connection slot of the watched sessions (its name since they lived among dokit's flags) */
  #watched(): ConnectionSlot<string[]> {
    // The ids a connection watches: at most MAX_WATCHED_SESSIONS, each of at most MAX_SESSION_ID_LENGTH characters (6 bytes each as escaped JSON at worst).
    // SAFETY: frames and changes reach live history only once Sessions is attached.
    return (this.#slot ??= (this.dispatch as Dispatch).connectionSlot<string[]>("sessions", {
      maxBytes: MAX_WATCHED_SESSIONS * (MAX_SESSION_ID_LENGTH * 6 + 3) + 2,
      check: (value): value is string[] => Array.isArray(value) && value.every((id) => typeof id === "string"),
    }));
  }

  #allowed(connection: Connection, session: string, readonly: boolean): "read" | "write" | false {
    let access: "read" | "write" | false;
    try {
      access = this.#access ? this.#access(connection, session) : "read";
    } catch (error) {
      console.error(`dokit: Sessions access() failed for connection ${connection.id}: ${errorMessage(error)}`);
      return false;
    }
    if (access !== "read" && access !== "write") return false;
    return readonly && access === "write" ? "read" : access;
  }

  #watch(connection: Connection, session: string, on: boolean): boolean {
    const watched = this.#watched().get(connection) ?? [];
    if (on === watched.includes(session)) return true;
    if (on && watched.length >= MAX_WATCHED_SESSIONS) {
      return refuse(connection, SESSION_REJECTED, `A connection may watch at most ${MAX_WATCHED_SESSIONS} sessions`, undefined, session);
    }
    const next = on ? [...watched, session] : watched.filter((name) => name !== session);
    try {
      this.#watched().set(connection, next.length > 0 ? next : undefined);
    } catch (error) {
      // The attachment is full (the connection's own state takes the room).
      console.warn(`dokit: could not record a watched session on connection ${connection.id}: ${errorMessage(error)}`);
      return refuse(connection, SESSION_REJECTED, "This connection cannot watch more sessions", undefined, session);
    }
    return true;
  }

  #page(connection: Connection, session: string, id: string, frame: Record<string, unknown>): boolean {
    const leafId = frame.leafId;
    const before = frame.before;
    if ((leafId !== undefined && typeof leafId !== "string") || (before !== undefined && typeof before !== "string")) {
      return refuse(connection, SESSION_REJECTED, "leafId and before must be message ids", id, session);
    }
    const maxBytes = clamp(frame.maxBytes, DEFAULT_PAGE_BYTES, MAX_PAGE_BYTES);
    const limit = clamp(frame.limit, DEFAULT_PAGE_MESSAGES, MAX_PAGE_MESSAGES);
    const store = this.#source.store();
    if (leafId !== undefined && !store.exists(session, leafId)) return this.#sendPage(connection, session, id, [], false);
    const { ids, sizes } = store.path(session, leafId);
    let end = ids.length;
    if (before !== undefined) {
      end = ids.indexOf(before);
      if (end < 0) return this.#sendPage(connection, session, id, [], false);
    }
    let start = end;
    let bytes = 0;
    while (start > 0 && end - start < limit) {
      const size = sizes[start - 1] as number;
      if (start < end && bytes + size > maxBytes) break;
      bytes += size;
      start--;
    }
    const messages = store.load(session, ids.slice(start, end));
    return this.#sendPage(connection, session, id, messages, start > 0);
  }

  #sendPage(connection: Connection, session: string, id: string, messages: SessionMessage[], more: boolean): boolean {
    trySend(connection, JSON.stringify({ type: SESSION, op: "page", id, session, messages: messages as never, more } satisfies SessionServerFrame));
    return true;
  }

  async #write(connection: Connection, session: string, id: string, op: "append" | "update", frame: Record<string, unknown>): Promise<boolean> {
    const message = frame.message as SessionMessage;
    const parentId = frame.parentId;
    if (op === "append" && parentId !== undefined && parentId !== null && typeof parentId !== "string") {
      return refuse(connection, SESSION_REJECTED, "parentId must be a message id or null", id, session);
    }
    if (message && typeof message === "object" && typeof (message as { createdAt?: unknown }).createdAt === "string") {
      (message as { createdAt?: unknown }).createdAt = new Date((message as unknown as { createdAt: string }).createdAt);
    }
    const handle = this.#source.session(session);
    try {
      if (op === "append") {
        const options = parentId === undefined ? { source: "client" as const } : { source: "client" as const, parentId: parentId as string | null };
        const { inserted } = await handle.appendMessage(message, options);
        trySend(connection, JSON.stringify({ type: SESSION, op: "ack", id, session, inserted } satisfies SessionServerFrame));
      } else {
        const found = (await handle.updateMessage(message, { source: "client" })) !== null;
        trySend(connection, JSON.stringify({ type: SESSION, op: "ack", id, session, found } satisfies SessionServerFrame));
      }
    } catch (error) {
      const code = error instanceof DokitError ? error.code : undefined;
      if (code === "MESSAGE_TOO_LARGE") return refuse(connection, SESSION_TOO_LARGE, wireText(error), id, session);
      if (code === "INVALID_MESSAGE" || error instanceof TypeError) return refuse(connection, SESSION_REJECTED, wireText(error), id, session);
      console.error(`dokit: a session ${op} from connection ${connection.id} failed: ${errorMessage(error)}`);
      return refuse(connection, SESSION_REJECTED, `The ${op} failed`, id, session);
    }
    return true;
  }
}

/** A refusal to the connection that caused it. @returns true (the frame was handled) */
function refuse(connection: Connection, code: string, error: string, id?: string, session?: string): true {
  const frame: SessionErrorFrame = { type: "dokit_error", code, error };
  if (id !== undefined) frame.id = id;
  if (session !== undefined) frame.session = session;
  trySend(connection, JSON.stringify(frame));
  return true;
}

/** The sentence a client reads: a DokitError's message without the library's prefix. */
function wireText(error: unknown): string {
  const message = errorMessage(error);
  return message.startsWith("dokit: ") ? message.slice(7) : message;
}

function clamp(value: unknown, fallback: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) return fallback;
  return Math.min(value, max);
}

/** A change-feed event as watchers receive it. */
function toWire(event: SessionChangeEvent): WireSessionEvent {
  // Messages travel as their JSON (createdAt as its ISO string): the casts name that shape.
  switch (event.type) {
    case "append":
      return { type: "append", message: event.message as never, parentId: event.parentId ?? null, inserted: event.inserted };
    case "update":
      return { type: "update", message: event.message as never };
    case "delete":
      return { type: "delete", messageIds: event.messageIds };
    case "import":
      return { type: "import", message: event.message as never, parentId: event.parentId };
    case "clear":
    case "compact":
    case "compaction":
      return { type: event.type };
  }
}
