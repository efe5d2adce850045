import type { Streams } from "./streams";

/** Options of {@link sseResponse}. */
export interface SSEResponseOptions {
  /** The request: resume from its `Last-Event-ID` header or `?from=`; its signal ends the tail when the client goes. */
  request?: Request;
  /** The first cursor to send; overrides what the request says. */
  from?: number;
  /** Another signal that ends the response. */
  signal?: AbortSignal;
  /** The most chunks per write. Default 100. */
  batchSize?: number;
  /** Ms between `: heartbeat` comments while tailing (keeps idle proxies from closing it); 0 disables. Default 30,000. */
  heartbeatMs?: number;
}

const encoder = new TextEncoder();

/**
 * Serves one stream as Server-Sent Events: each chunk is a message whose `id:` is its cursor (so a
 * reconnecting `EventSource` resumes by itself with `Last-Event-ID`), then an `up-to-date` event at the
 * stored tail, live appends, and `done` (completed, or deleted) or `error` (with the recorded reason).
 * A heartbeat timer runs while the response is open (an open response keeps the object in memory anyway).
 * @returns the response: 404 when the stream does not exist, 416 when the resume point is past its end, 400 for a malformed one
 */
export async function sseResponse(streams: Streams, streamId: string, options: SSEResponseOptions = {}): Promise<Response> {
  const from = resumePoint(options);
  if (from === undefined) return text(400, "dokit: Last-Event-ID or ?from= is not a cursor (an integer from 0)");
  const status = await streams.status(streamId);
  if (status === null) return text(404, `dokit: stream "${streamId}" does not exist`);
  if (from > status.cursor) return text(416, `dokit: resume point ${from} is past the end of stream "${streamId}" (cursor ${status.cursor})`);
  const heartbeatMs = options.heartbeatMs ?? 30_000;
  const abort = new AbortController();
  const signals = [options.request?.signal, options.signal].filter((s): s is AbortSignal => s !== undefined);
  const stop = () => abort.abort();
  for (const signal of signals) {
    if (signal.aborted) abort.abort();
    else signal.addEventListener("abort", stop, { once: true });
  }
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true;
      const write = (chunk: string) => {
        if (!open) return;
        try {
          controller.enqueue(encoder.encode(chunk));
        } catch {
          open = false;
        }
      };
      if (heartbeatMs > 0) heartbeat = setInterval(() => write(": heartbeat\n\n"), heartbeatMs);
      const finish = () => {
        if (heartbeat !== undefined) clearInterval(heartbeat);
        for (const signal of signals) signal.removeEventListener("abort", stop);
        if (!open) return;
        open = false;
        try {
          controller.close();
        } catch {
          // The reader went first.
        }
      };
      void (async () => {
        try {
          const batches = streams.readBatches(streamId, {
            from,
            signal: abort.signal,
            ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
            onUpToDate: () => write("event: up-to-date\ndata: {}\n\n"),
          });
          for await (const batch of batches) {
            let out = "";
            for (const { seq, chunk } of batch) out += `id: ${seq}\ndata: ${JSON.stringify(chunk)}\n\n`;
            write(out);
          }
          const end = await streams.status(streamId);
          if (end?.state === "errored") write(`event: error\ndata: ${JSON.stringify({ reason: end.error ?? null })}\n\n`);
          else write("event: done\ndata: {}\n\n");
        } catch {
          // Aborted by the client or the signal: the response just ends.
        } finally {
          finish();
        }
      })();
    },
    cancel() {
      if (heartbeat !== undefined) clearInterval(heartbeat);
      abort.abort();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store" } });
}

/** @returns the first cursor to send, or `undefined` when the request's resume point is malformed */
function resumePoint(options: SSEResponseOptions): number | undefined {
  if (options.from !== undefined) return Number.isSafeInteger(options.from) && options.from >= 0 ? options.from : undefined;
  const request = options.request;
  if (!request) return 0;
  const last = request.headers.get("Last-Event-ID");
  if (last !== null && last !== "") {
    const seq = Number(last);
    return Number.isSafeInteger(seq) && seq >= 0 && /^\d+$/.test(last.trim()) ? seq + 1 : undefined;
  }
  const param = new URL(request.url).searchParams.get("from");
  if (param === null || param === "") return 0;
  const seq = Number(param);
  return Number.isSafeInteger(seq) && seq >= 0 && /^\d+$/.test(param) ? seq : undefined;
}

const text = (status: number, body: string): Response => new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });
