// Thin WebSocket clients built for timing: one message callback per socket, no buffering
// beyond what a measure asks for.
import { WebSocket as PlainWebSocket } from "ws";

/**
 * `--deflate`: the clients are Node's global WebSocket, which always offers permessage-deflate (as
 * browsers do), and every frame is compressed both ways. By default they are `ws` clients that
 * offer no extension: compression adds a cost that does not depend on the room, which dilutes
 * the ratios (bench/README.md, "How it runs").
 */
export const DEFLATE = process.argv.includes("--deflate");
/** The extension every client must have negotiated (`latest.json`'s `compression`). */
export const EXTENSION = DEFLATE ? "permessage-deflate" : "none";
/** What the clients negotiate, as the measures' headers print it. */
export const COMPRESSION = DEFLATE ? "permessage-deflate on" : "no permessage-deflate";

/** A connected socket with a replaceable message callback. */
export interface Client {
  ws: WebSocket;
  /** Called with every text frame; replace it per measure. */
  onMessage: (data: string) => void;
  /** Performance time when the first frame arrived (NaN until then). */
  firstFrameAt: number;
}

/** @returns `ws://host/room/{impl}/{room}` with an optional connection id */
export function roomUrl(base: URL, impl: string, room: string, pk?: string): string {
  const url = new URL(`/room/${impl}/${room}`, base);
  url.protocol = "ws:";
  if (pk) url.searchParams.set("_pk", pk);
  return url.href;
}

/** Evicts `/room/{impl}/{room}` the way hibernation does (the bench workers' `/evict` route; sockets stay open). */
export async function evictRoom(base: URL, impl: string, room: string): Promise<void> {
  const evicted = await fetch(new URL(`/evict/${impl}/${room}`, base));
  if (!evicted.ok) throw new Error(`evict ${impl}/${room} failed: ${evicted.status} ${await evicted.text()}`);
}

/**
 * Opens a socket and resolves once it is open and has received `frames`
 * frames (the connect sequence: identity, state).
 */
export function connect(url: string, frames = 2, timeoutMs = 30_000): Promise<Client> {
  return new Promise((resolve, reject) => {
    // SAFETY: `ws`'s client implements the WHATWG WebSocket members the bench uses (send, close, readyState, extensions, on*, addEventListener).
    const ws = DEFLATE ? new WebSocket(url) : (new PlainWebSocket(url, { perMessageDeflate: false }) as unknown as WebSocket);
    let seen = 0;
    const client: Client = { ws, onMessage: () => {}, firstFrameAt: Number.NaN };
    const timer = setTimeout(() => reject(new Error(`connect timed out: ${url}`)), timeoutMs);
    ws.onmessage = (event) => {
      if (seen === 0) client.firstFrameAt = performance.now();
      if (++seen === frames) {
        clearTimeout(timer);
        ws.onmessage = (e) => client.onMessage(e.data as string);
        resolve(client);
      }
    };
    ws.addEventListener("open", () => {
      // The measures' conditions: a compressed socket would carry its cost into every figure.
      if ((ws.extensions ?? "").includes("permessage-deflate") !== DEFLATE) {
        clearTimeout(timer);
        ws.close();
        reject(new Error(`connect: extensions "${ws.extensions}" (expected ${EXTENSION}): ${url}`));
      }
    });
    ws.onerror = () => {
      clearTimeout(timer);
      reject(new Error(`connect failed: ${url}`));
    };
  });
}

/** Opens `count` sockets to one room, `parallel` at a time, each open once it received `frames` frames (as {@link connect}). */
export async function connectMany(url: (i: number) => string, count: number, parallel = 50, frames = 2): Promise<Client[]> {
  const clients: Client[] = new Array(count);
  let next = 0;
  async function lane(): Promise<void> {
    while (next < count) {
      const i = next++;
      clients[i] = await connect(url(i), frames);
    }
  }
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, lane));
  return clients;
}

/** Closes sockets and waits (bounded) until they report closed. */
export async function closeAll(clients: Client[]): Promise<void> {
  await Promise.all(
    clients.map(
      (client) =>
        new Promise<void>((resolve) => {
          if (client.ws.readyState === WebSocket.CLOSED) return resolve();
          const timer = setTimeout(resolve, 2_000);
          client.ws.onclose = () => {
            clearTimeout(timer);
            resolve();
          };
          client.ws.close(1000, "bench done");
        }),
    ),
  );
}

/** Sends `message` and resolves with the round-trip time of the first frame `match` accepts. */
export function roundTrip(client: Client, message: string, match: (data: string) => boolean, timeoutMs = 10_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no reply to ${message.slice(0, 60)}`)), timeoutMs);
    const start = performance.now();
    client.onMessage = (data) => {
      if (!match(data)) return;
      const elapsed = performance.now() - start;
      clearTimeout(timer);
      client.onMessage = () => {};
      resolve(elapsed);
    };
    client.ws.send(message);
  });
}

/**
 * Arms every client to count frames `match` accepts, then runs `trigger`.
 * @returns ms from just before `trigger` until every client received one matching frame
 */
export function fanOut(clients: Client[], trigger: () => void, match: (data: string) => boolean, timeoutMs = 30_000): Promise<number> {
  return new Promise((resolve, reject) => {
    let pending = clients.length;
    const timer = setTimeout(() => reject(new Error(`fan-out: ${pending} of ${clients.length} clients never received the frame`)), timeoutMs);
    let start = 0;
    for (const client of clients) {
      let got = false;
      client.onMessage = (data) => {
        if (got || !match(data)) return;
        got = true;
        client.onMessage = () => {};
        if (--pending === 0) {
          clearTimeout(timer);
          resolve(performance.now() - start);
        }
      };
    }
    start = performance.now();
    trigger();
  });
}
