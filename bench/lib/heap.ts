// workerd's heap, read over its inspector (DevTools protocol), for the bench's memory measure.
// The worker must be started with `inspector: true` and `--expose-gc` (lib/worker.ts), and route
// `/gc` to a full collection (worker/worker.ts).
import WebSocket from "ws";

/** The isolate's live heap: V8's JavaScript heap and the embedder's (workerd's C++ objects on cppgc), in bytes. */
export interface HeapUsage {
  js: number;
  embedder: number;
}

/** A DevTools session on the worker's isolate, through wrangler's inspector proxy. */
export interface HeapReader {
  /** Runs a full garbage collection in the worker (its `/gc` route), then reads the live heap. */
  afterGc(): Promise<HeapUsage>;
  /** Reads the heap as it is, garbage not yet collected included (answered when the isolate is between events). */
  usage(): Promise<HeapUsage>;
  close(): void;
}

/**
 * Opens a DevTools session on the isolate behind `inspector` (wrangler's proxy lists one target).
 * @param inspector - the inspector's address (`StartedWorker.inspector`)
 * @param worker - the worker's own address, whose `/gc` route collects
 */
export async function openHeapReader(inspector: URL, worker: URL): Promise<HeapReader> {
  const targets = (await (await fetch(new URL("/json", inspector.href.replace(/^ws/, "http")))).json()) as { webSocketDebuggerUrl?: string }[];
  const address = targets[0]?.webSocketDebuggerUrl;
  if (!address) throw new Error(`no inspector target at ${inspector.href}`);
  const ws = new WebSocket(address);
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  let next = 0;
  const waiting = new Map<number, { resolve(result: unknown): void; reject(error: Error): void }>();
  ws.on("message", (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
    const call = message.id === undefined ? undefined : waiting.get(message.id);
    if (!call) return; // events
    waiting.delete(message.id as number);
    if (message.error) call.reject(new Error(`inspector: ${message.error.message}`));
    else call.resolve(message.result);
  });
  const send = (method: string): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = ++next;
      const timer = setTimeout(() => (waiting.delete(id), reject(new Error(`inspector: no answer to ${method} in 10 s`))), 10_000);
      waiting.set(id, {
        resolve: (result) => (clearTimeout(timer), resolve(result)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
      ws.send(JSON.stringify({ id, method, params: {} }));
    });
  const usage = async (): Promise<HeapUsage> => {
    const heap = (await send("Runtime.getHeapUsage")) as { usedSize: number; embedderHeapUsedSize?: number };
    return { js: heap.usedSize, embedder: heap.embedderHeapUsedSize ?? 0 };
  };
  return {
    async afterGc() {
      const response = await fetch(new URL("/gc", worker));
      if (!response.ok) throw new Error(`/gc answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
      return usage();
    },
    usage,
    close: () => ws.close(),
  };
}
