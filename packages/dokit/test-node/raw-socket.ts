// A WebSocket client over a bare TCP socket that does what a hostile client may: it never answers
// a close frame (so the server's close never completes from its side) and writes whatever frames
// it is told to, as fast as the socket takes them. Only what these tests need: text frames out
// (masked, as a client must), and the text and close frames in.
import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";

/** A raw client: its TCP socket, the text frames and close codes it received, and a sender. */
export interface RawSocket {
  socket: Socket;
  /** Text frames received, in order. */
  texts: string[];
  /** Close codes received (never answered). */
  closes: number[];
  /** Whether the server ended the TCP connection. */
  ended: boolean;
  /** Writes one text frame (does not wait for the socket to drain). */
  send(text: string): boolean;
  /** Ends the TCP connection from this side. */
  destroy(): void;
}

/** Opens `path` (with its query) on `base` as a raw WebSocket client; settles once the upgrade is answered 101. */
export function rawSocket(base: URL, path: string): Promise<RawSocket> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let buffer = Buffer.alloc(0);
    let upgraded = false;
    const raw: RawSocket = {
      socket,
      texts: [],
      closes: [],
      ended: false,
      send: (text) => socket.write(frame(Buffer.from(text))),
      destroy: () => socket.destroy(),
    };
    socket.on("close", () => (raw.ended = true));
    socket.on("error", (error) => (upgraded ? undefined : reject(error)));
    socket.on("connect", () => {
      const key = randomBytes(16).toString("base64");
      socket.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (!upgraded) {
        const end = buffer.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buffer.subarray(0, end).toString();
        if (!head.startsWith("HTTP/1.1 101")) return reject(new Error(`not upgraded: ${head.split("\r\n")[0]}`));
        upgraded = true;
        buffer = buffer.subarray(end + 4);
        resolve(raw);
      }
      // Unmasked server frames: text (1) and close (8); payload lengths up to 64 bits.
      for (;;) {
        if (buffer.length < 2) return;
        const opcode = buffer[0]! & 0x0f;
        let length = buffer[1]! & 0x7f;
        let offset = 2;
        if (length === 126) {
          if (buffer.length < 4) return;
          length = buffer.readUInt16BE(2);
          offset = 4;
        } else if (length === 127) {
          if (buffer.length < 10) return;
          length = Number(buffer.readBigUInt64BE(2));
          offset = 10;
        }
        if (buffer.length < offset + length) return;
        const payload = buffer.subarray(offset, offset + length);
        buffer = buffer.subarray(offset + length);
        if (opcode === 1) raw.texts.push(payload.toString());
        else if (opcode === 8) raw.closes.push(payload.length >= 2 ? payload.readUInt16BE(0) : 1005);
      }
    });
  });
}

/** @returns a masked, final text frame carrying `payload` */
function frame(payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const length = payload.length;
  const head = length < 126 ? Buffer.from([0x81, 0x80 | length]) : length < 65536 ? Buffer.from([0x81, 0x80 | 126, length >> 8, length & 255]) : Buffer.concat([Buffer.from([0x81, 0x80 | 127]), bigLength(length)]);
  const body = Buffer.alloc(length);
  for (let i = 0; i < length; i++) body[i] = payload[i]! ^ mask[i & 3]!;
  return Buffer.concat([head, mask, body]);
}

function bigLength(length: number): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64BE(BigInt(length));
  return out;
}
