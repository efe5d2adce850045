// A TCP proxy in front of the bench worker whose connections can be frozen one by one: a frozen
// connection forwards nothing in either direction and closes nothing, which is what a dead link
// (a NAT that dropped the mapping, a laptop that went to sleep) looks like to both ends. New
// connections pass. The proxy reads the server's WebSocket frames on every connection, frozen or
// not, so a measure sees when the server closed a socket whose client can no longer hear it.
import { createConnection, createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/** One client connection through the proxy. */
export interface ProxiedLink {
  /** Stops forwarding both ways; both sockets stay open. */
  freeze(): void;
  /** Performance time when the last bytes from the client were forwarded to the server (NaN before). */
  lastForwardedAt: number;
  /** Resolves with the performance time and code of the server's close frame, seen frozen or not. */
  serverClosed: Promise<{ at: number; code: number }>;
}

/** A started proxy. */
export interface FreezableProxy {
  /** `127.0.0.1:<port>`: where clients connect. */
  host: string;
  /** Every connection so far, oldest first. */
  links: ProxiedLink[];
  /** Resolves with the next connection the proxy accepts. */
  nextLink(): Promise<ProxiedLink>;
  /** Destroys every connection and stops listening. */
  close(): Promise<void>;
}

/**
 * Reads the server's side of a WebSocket connection: skips the HTTP response head, then walks
 * the frames (unmasked, as a server sends them) and reports the first close frame.
 */
function serverFrames(onClose: (code: number) => void): (chunk: Buffer) => void {
  let buffer = Buffer.alloc(0);
  let inHead = true;
  let done = false;
  return (chunk) => {
    if (done) return;
    buffer = Buffer.concat([buffer, chunk]);
    if (inHead) {
      const end = buffer.indexOf("\r\n\r\n");
      if (end < 0) return;
      buffer = buffer.subarray(end + 4);
      inHead = false;
    }
    while (buffer.length >= 2) {
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
      if (opcode === 0x8) {
        done = true;
        return onClose(length >= 2 ? buffer.readUInt16BE(offset) : 1005);
      }
      buffer = buffer.subarray(offset + length);
    }
  };
}

/**
 * Starts a freezable proxy to `target` (the worker's `http://host:port/`) on a free loopback port.
 */
export async function freezableProxy(target: URL): Promise<FreezableProxy> {
  const links: ProxiedLink[] = [];
  const sockets = new Set<Socket>();
  const waiting: ((link: ProxiedLink) => void)[] = [];
  const server = createServer((client) => {
    let frozen = false;
    let closed!: (value: { at: number; code: number }) => void;
    const link: ProxiedLink = {
      freeze: () => void (frozen = true),
      lastForwardedAt: Number.NaN,
      serverClosed: new Promise((resolve) => (closed = resolve)),
    };
    links.push(link);
    waiting.shift()?.(link);
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => sockets.delete(socket));
    }
    const read = serverFrames((code) => closed({ at: performance.now(), code }));
    client.on("data", (chunk) => {
      if (frozen) return;
      upstream.write(chunk);
      link.lastForwardedAt = performance.now();
    });
    upstream.on("data", (chunk) => {
      read(chunk);
      if (!frozen) client.write(chunk);
    });
    client.on("close", () => frozen || upstream.destroy());
    upstream.on("close", () => frozen || client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    links,
    nextLink: () => new Promise((resolve) => waiting.push(resolve)),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
