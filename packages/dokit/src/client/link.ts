// One connection attempt: a WebSocket plus the transport that frames travel
// on. The client owns reconnection; a Link lives exactly as long as its socket.
import { sendInOrder } from "./binary";
import type { AgentClientMessage } from "./binary";

/** What a link reports to the client. */
export interface LinkEvents {
  /** The socket opened. */
  onOpen(): void;
  /** A frame from the server (text, or binary on the JSON transport). */
  onFrame(data: unknown): void;
  /** The socket closed; called once. */
  onClose(code: number, reason: string, wasClean: boolean): void;
  /** The socket reported an error (a close follows). */
  onError(): void;
}

/** One socket and how to use it. */
export interface Link {
  /** The socket: the client reads its `url`, `readyState` and `bufferedAmount`. */
  readonly socket: WebSocket;
  /** Sends an ordinary frame (state, rpc, user message); a Blob's bytes are read first, in order. */
  send(frame: AgentClientMessage): void;
  /** Calls a method natively (Cap'n Web only); JSON links send rpc frames instead. */
  invoke?(method: string, args: unknown[]): Promise<unknown>;
  /** Closes the socket. */
  close(code?: number, reason?: string): void;
}

/** Opens a link for one URL. */
export type OpenLink = (url: string, events: LinkEvents) => Link;

/**
 * Wires the socket's open, close and error events to `events` (its messages are the
 * transport's to read). Binary frames arrive as ArrayBuffers; the client converts them
 * to its `binaryType`.
 * @returns the socket
 */
export function watchLifecycle(socket: WebSocket, events: LinkEvents): WebSocket {
  socket.binaryType = "arraybuffer";
  socket.addEventListener("open", () => events.onOpen());
  socket.addEventListener("close", (event) => events.onClose(event.code, event.reason, event.wasClean));
  socket.addEventListener("error", () => events.onError());
  return socket;
}

/** The default transport: JSON frames on a plain (server-side hibernating) WebSocket. */
export const openJsonLink: OpenLink = (url, events) => {
  const socket = watchLifecycle(new WebSocket(url), events);
  // Every frame of the JSON transport arrives as a message.
  socket.addEventListener("message", (event) => events.onFrame(event.data));
  return {
    socket,
    send: sendInOrder((frame) => socket.send(frame)),
    close: (code, reason) => socket.close(code, reason),
  };
};
