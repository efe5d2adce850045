// The SSE `retry:` field: how long a client waits before reconnecting after
// a stream ends without the responses it expected (a server-side close, an
// eviction, a redeploy). McpHandler sends it as the first frame of every SSE
// stream on both lanes. A frame with only `retry:` dispatches no event, so
// clients that predate resumability see nothing new.

/**
 * Prefixes an SSE response's body with a `retry: <ms>` frame; any other response passes unchanged.
 * @param response - a response from either protocol lane
 * @param retryMs - the reconnection delay to announce, in ms
 * @returns the response to send
 */
export function withRetryField(response: Response, retryMs: number): Response {
  if (response.body === null || !response.headers.get("content-type")?.startsWith("text/event-stream")) return response;
  const frame = new TextEncoder().encode(`retry: ${retryMs}\n\n`);
  const prefix = new TransformStream<Uint8Array, Uint8Array>({
    start(controller) {
      controller.enqueue(frame);
    },
  });
  return new Response(response.body.pipeThrough(prefix), response);
}
