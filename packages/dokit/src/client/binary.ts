// Binary data on the client: messages as `send()` takes them, frames as
// `binaryType` asks for them, and the byte counts behind `bufferedAmount`.

/** What `send()` takes: the same as `WebSocket.send()`. */
export type AgentClientMessage = string | ArrayBuffer | Blob | ArrayBufferView<ArrayBuffer>;

/** What a link puts on the wire: a message whose Blob has been read. */
export type WireMessage = Exclude<AgentClientMessage, Blob>;

/**
 * Wraps a link's `post` so Blobs can be sent: their bytes are read first, and
 * messages sent after a Blob wait for it, so order is kept. Runtimes differ on
 * `WebSocket.send(blob)` (Workers has none) and Cap'n Web cannot carry a Blob.
 * @param post - sends one message on the socket
 * @returns a send function that takes Blobs too
 */
export function sendInOrder(post: (message: WireMessage) => void): (message: AgentClientMessage) => void {
  let tail: Promise<void> | null = null;
  return (message) => {
    if (!tail && !(message instanceof Blob)) return post(message);
    // A failure here means the socket is gone; its close event reports that.
    const mine: Promise<void> = (tail ?? Promise.resolve())
      .then(async () => post(message instanceof Blob ? await message.arrayBuffer() : message))
      .catch(() => {})
      .finally(() => {
        if (tail === mine) tail = null;
      });
    tail = mine;
  };
}

/**
 * @param data - a frame as a link delivers it: text, an ArrayBuffer, or bytes (Cap'n Web)
 * @param binaryType - the client's `binaryType`
 * @returns text unchanged, binary as a Blob or an ArrayBuffer
 */
export function asBinaryType(data: unknown, binaryType: BinaryType): unknown {
  if (!(data instanceof ArrayBuffer) && !ArrayBuffer.isView(data)) return data;
  const buffer =
    data instanceof ArrayBuffer ? data : new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice().buffer;
  return binaryType === "blob" ? new Blob([buffer]) : buffer;
}

/** How a client receives binary frames, as on a WebSocket. */
export type BinaryType = "blob" | "arraybuffer";

const encoder = new TextEncoder();

/** @returns the size of a message in bytes (UTF-8 for text) */
export function byteSize(message: AgentClientMessage): number {
  if (typeof message === "string") return encoder.encode(message).byteLength;
  if (message instanceof Blob) return message.size;
  return message.byteLength;
}
