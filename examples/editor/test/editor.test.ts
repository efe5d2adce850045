import { env, exports } from "cloudflare:workers";
import { hibernate } from "dokit/testing";
import { describe, expect, it, onTestFinished } from "vitest";
import { WebsocketProvider } from "y-websocket";
import * as Y from "yjs";
import type { InspectorSnapshot, YjsView } from "dokit/inspector";
import { fresh } from "../../test-helpers";
import { TEXT } from "../src/api";

// The Worker's own fetch (typed by GlobalProps in env.d.ts): requests go through its routing.
const worker = exports.default;

/**
 * The WebSocket y-websocket's provider opens (its `WebSocketPolyfill` option), reached through the
 * Worker's own fetch: an upgrade request, then the client end of the socket. Everything past the
 * socket is the real provider, the real Worker and the real object.
 */
class WorkerWebSocket {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;
  readonly CONNECTING = 0;
  readonly OPEN = 1;
  readonly CLOSING = 2;
  readonly CLOSED = 3;
  readyState = 0;
  binaryType = "arraybuffer";
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: ArrayBuffer | string }) => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  #ws: WebSocket | undefined;
  /** Messages in arrival order (a binary one may arrive as a Blob, read asynchronously). */
  #delivered: Promise<void> = Promise.resolve();

  constructor(url: string) {
    void this.#open(url.replace(/^ws/, "http"));
  }

  async #open(url: string): Promise<void> {
    const response = await worker.fetch(url, { headers: { Upgrade: "websocket" } });
    const ws = response.webSocket;
    if (!ws) {
      this.readyState = this.CLOSED;
      this.onclose?.({ code: 1006, reason: `upgrade answered ${response.status}` });
      return;
    }
    ws.accept();
    this.#ws = ws;
    ws.addEventListener("message", (event) => {
      const data: unknown = event.data;
      this.#delivered = this.#delivered.then(async () => {
        this.onmessage?.({ data: data instanceof Blob ? await data.arrayBuffer() : (data as ArrayBuffer | string) });
      });
    });
    ws.addEventListener("close", (event) => {
      this.#delivered = this.#delivered.then(() => {
        this.readyState = this.CLOSED;
        this.onclose?.({ code: event.code, reason: event.reason });
      });
    });
    if (this.readyState === this.CLOSING) {
      ws.close(1000);
      return;
    }
    this.readyState = this.OPEN;
    this.onopen?.({});
  }

  send(data: ArrayBuffer | Uint8Array | string): void {
    this.#ws?.send(data);
  }

  close(code = 1000, reason?: string): void {
    if (this.readyState >= this.CLOSING) return;
    this.readyState = this.CLOSING;
    this.#ws?.close(code, reason);
  }
}

type Editor = { doc: Y.Doc; text: Y.Text; provider: WebsocketProvider };
/** The WebSocket class the provider takes, as y-websocket's types name it. */
type WebSocketClass = NonNullable<NonNullable<ConstructorParameters<typeof WebsocketProvider>[3]>["WebSocketPolyfill"]>;

/** A y-websocket provider on document `name`, like a page's: `/agents/doc/<name>/yjs`. @returns once it is synced */
async function editor(name: string, user?: { name: string; color: string }): Promise<Editor> {
  const doc = new Y.Doc();
  const provider = new WebsocketProvider("ws://localhost/agents/doc", `${name}/yjs`, doc, {
    // SAFETY: the provider uses only the members WorkerWebSocket has (readyState, the on* handlers, send, close).
    WebSocketPolyfill: WorkerWebSocket as unknown as WebSocketClass,
    // No BroadcastChannel between providers of this one isolate: every change must go through the object.
    disableBc: true,
  });
  onTestFinished(() => provider.destroy());
  if (user) provider.awareness.setLocalStateField("user", user);
  if (!provider.synced) await new Promise<void>((resolve) => provider.once("sync", () => resolve()));
  return { doc, text: doc.getText(TEXT), provider };
}

const objectText = async (name: string) => (await worker.fetch(`http://localhost/text?doc=${name}`)).text();
const yjsSnapshot = async (name: string) =>
  ((await (await worker.fetch(`http://localhost/agents/doc/${name}/__dokit/snapshot`)).json()) as InspectorSnapshot).yjs as YjsView;

describe("editor", () => {
  it("two y-websocket providers edit the same text, and the object holds it", async () => {
    const name = fresh("sync");
    const ann = await editor(name);
    const bob = await editor(name);
    ann.text.insert(0, "Hello");
    await expect.poll(() => bob.text.toString()).toBe("Hello");
    bob.text.insert(5, ", world");
    await expect.poll(() => ann.text.toString()).toBe("Hello, world");
    // Concurrent edits at the same place converge in both, and in the object.
    ann.text.insert(0, "A");
    bob.text.insert(0, "B");
    await expect.poll(() => ann.text.toString()).toMatch(/^(AB|BA)Hello, world$/);
    await expect.poll(() => bob.text.toString()).toBe(ann.text.toString());
    expect(await objectText(name)).toBe(ann.text.toString());
  });

  it("shows each editor's name to the others, and the stored size and editors in the inspector", async () => {
    const name = fresh("awareness");
    const ann = await editor(name, { name: "Ann", color: "#d1495b" });
    const bob = await editor(name, { name: "Bob", color: "#00798c" });
    const names = (e: Editor) => [...e.provider.awareness.getStates().values()].map((state) => (state as { user?: { name: string } }).user?.name).sort();
    await expect.poll(() => names(ann)).toEqual(["Ann", "Bob"]);
    await expect.poll(() => names(bob)).toEqual(["Ann", "Bob"]);
    ann.text.insert(0, "typed by Ann");

    await expect.poll(async () => (await yjsSnapshot(name)).size.updates).toBeGreaterThan(0);
    const view = await yjsSnapshot(name);
    expect(view.storedBytes).toBeGreaterThan("typed by Ann".length);
    const editors = view.editors.map((e) => (e.awareness as { state: { user: { name: string } } }[]).map((client) => client.state.user.name)).flat().sort();
    expect(editors).toEqual(["Ann", "Bob"]);

    // Bob leaves: Ann's provider hears of it, and the inspector lists Ann alone.
    bob.provider.destroy();
    await expect.poll(() => names(ann)).toEqual(["Ann"]);
    await expect.poll(async () => (await yjsSnapshot(name)).editors.length).toBe(1);
  });

  it("a provider that connects after a hibernation gets the text from storage, and the others' names", async () => {
    const name = fresh("wake");
    const ann = await editor(name, { name: "Ann", color: "#d1495b" });
    ann.text.insert(0, "kept across a hibernation");
    await expect.poll(() => objectText(name)).toBe("kept across a hibernation");
    await hibernate(env.Doc.get(env.Doc.idFromName(name)));
    const late = await editor(name, { name: "Late", color: "#66a182" });
    expect(late.text.toString()).toBe("kept across a hibernation");
    await expect
      .poll(() => [...late.provider.awareness.getStates().values()].map((state) => (state as { user?: { name: string } }).user?.name).sort())
      .toEqual(["Ann", "Late"]);
  });
});
