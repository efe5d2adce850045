// Sending a frame without caring whether the socket closed meanwhile: its close
// event cleans up after it.

/** Something frames are sent on: a Connection, a WebSocket. */
interface Sendable {
  send(message: string | ArrayBuffer | ArrayBufferView): void;
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
