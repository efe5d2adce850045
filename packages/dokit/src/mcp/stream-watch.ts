import { streamOfEventId } from "./event-store";

// Watches an SSE response on its way out, so the event log of a response
// stream can be dropped once the stream has completed: the body ended
// normally (not cancelled by a disconnect) after carrying the responses it
// owed. A stream the client dropped keeps its events for `Last-Event-ID`.

/** What one SSE body carried. */
export interface StreamSummary {
  /** Stream ids named by the event ids that passed. */
  streams: Set<string>;
  /** JSON-RPC responses (results and errors) that passed. */
  responses: number;
}

/**
 * Passes an SSE response through unchanged and calls `onComplete` when its body ends normally.
 * @param response - an SSE response from the SDK transport
 * @param onComplete - receives what the body carried; not called when the client disconnects
 * @returns the response to send
 */
export function watchStream(response: Response, onComplete: (summary: StreamSummary) => void): Response {
  if (response.body === null || !response.headers.get("content-type")?.startsWith("text/event-stream")) return response;
  const summary: StreamSummary = { streams: new Set(), responses: 0 };
  const decoder = new TextDecoder();
  let pending = "";
  // Text since `pending` last held a frame end, joined only when a frame completes, so a
  // large event arriving in many chunks is read in linear time.
  let unjoined: string[] = [];
  const watch = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      controller.enqueue(chunk);
      const text = decoder.decode(chunk, { stream: true });
      const before = unjoined.at(-1) ?? pending;
      if (!(before.slice(-1) + text).includes("\n\n")) {
        unjoined.push(text);
        return;
      }
      pending += unjoined.join("") + text;
      unjoined = [];
      let end = pending.indexOf("\n\n");
      while (end >= 0) {
        readFrame(pending.slice(0, end), summary);
        pending = pending.slice(end + 2);
        end = pending.indexOf("\n\n");
      }
    },
    flush() {
      try {
        onComplete(summary);
      } catch (error) {
        console.error("dokit: mcp: clearing a completed stream failed", error);
      }
    },
  });
  return new Response(response.body.pipeThrough(watch), response);
}

/** Reads one SSE frame (`id:` / `data:` lines; comments and priming frames count for nothing). */
function readFrame(frame: string, summary: StreamSummary): void {
  let data = "";
  for (const line of frame.split("\n")) {
    if (line.startsWith("id:")) {
      const stream = streamOfEventId(line.slice(3).trim());
      if (stream !== undefined) summary.streams.add(stream);
    } else if (line.startsWith("data:")) {
      data += line.slice(5).trimStart();
    }
  }
  if (data === "") return;
  try {
    const message: unknown = JSON.parse(data);
    if (message !== null && typeof message === "object" && "id" in message && ("result" in message || "error" in message)) {
      summary.responses++;
    }
  } catch {
    // not JSON: nothing to count
  }
}
