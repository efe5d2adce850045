// The browser's WebSocket, for dokit's client inside workerd: an upgrade request through the
// Worker's own fetch, then the client end of the socket. Everything past the socket is the real
// client (RoomMember), the real Worker with its room router, and the real shards and sequencer.
import { exports } from "cloudflare:workers";

const worker = exports.default;

export class WorkerWebSocket extends EventTarget {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;
  readonly CONNECTING = 0;
  readonly OPEN = 1;
  readonly CLOSING = 2;
  readonly CLOSED = 3;
  readonly url: string;
  readonly protocol = "";
  readonly extensions = "";
  readonly bufferedAmount = 0;
  readyState = 0;
  binaryType = "arraybuffer";
  #ws: WebSocket | undefined;

  constructor(url: string) {
    super();
    this.url = url;
    void this.#open(url.replace(/^ws/, "http"));
  }

  async #open(url: string): Promise<void> {
    const response = await worker.fetch(url, { headers: { Upgrade: "websocket" } });
    const ws = response.webSocket;
    if (!ws) return this.#closed(1006, `upgrade answered ${response.status}`);
    ws.accept();
    this.#ws = ws;
    ws.addEventListener("message", (event) => this.dispatchEvent(new MessageEvent("message", { data: event.data })));
    ws.addEventListener("close", (event) => this.#closed(event.code, event.reason));
    if (this.readyState === this.CLOSING) return void ws.close(1000);
    this.readyState = this.OPEN;
    this.dispatchEvent(new Event("open"));
  }

  #closed(code: number, reason: string): void {
    if (this.readyState === this.CLOSED) return;
    this.readyState = this.CLOSED;
    this.dispatchEvent(new CloseEvent("close", { code, reason, wasClean: code !== 1006 }));
  }

  send(data: string | ArrayBuffer | Uint8Array): void {
    this.#ws?.send(data);
  }

  close(code = 1000, reason?: string): void {
    if (this.readyState >= this.CLOSING) return;
    this.readyState = this.CLOSING;
    this.#ws?.close(code, reason);
    // The client hears of its own close at once, as a browser's socket reports it soon after.
    if (this.#ws) this.#closed(code, reason ?? "");
  }
}

/** Makes `new WebSocket(url)` open a WorkerWebSocket until the returned function is called. */
export function useWorkerWebSockets(): () => void {
  const original = globalThis.WebSocket;
  // SAFETY: the client uses only the members WorkerWebSocket has (events, readyState, url, send, close).
  globalThis.WebSocket = WorkerWebSocket as unknown as typeof WebSocket;
  return () => void (globalThis.WebSocket = original);
}
