import type { RemoteMethods } from "../callables/serve";
import { CONNECTION_ID_PARAM } from "../protocol/frames";
import { MAX_TAG_LENGTH } from "../websockets/tags";
import type { CapnwebTransport, WebSockets } from "../websockets/websockets";
import { CLOSE_REPLACED, REPLACED_REASON, Session, sessionOf } from "./session";

/**
 * Accepts an upgrade with `__agents_transport=capnweb`: a plain accepted
 * WebSocket carrying a Cap'n Web session. A session with the id of an open
 * one replaces it (the old one is closed with 1001 `Session replaced`).
 */
async function accept(request: Request, webSockets: WebSockets, callables: RemoteMethods | undefined): Promise<Response> {
  const id = new URL(request.url).searchParams.get(CONNECTION_ID_PARAM) || crypto.randomUUID();
  if (id.length > MAX_TAG_LENGTH) return new Response("Invalid connection id", { status: 400 });

  const previous = webSockets.getLiveConnection(id);
  if (previous) {
    const session = sessionOf(previous);
    if (session) await session.end(CLOSE_REPLACED, REPLACED_REASON, true);
    else previous.close(CLOSE_REPLACED, REPLACED_REASON);
  }

  const { 0: client, 1: server } = new WebSocketPair();
  server.accept();
  const session = new Session(server, id, request, webSockets, callables);
  await session.open(request);
  return new Response(null, { status: 101, webSocket: client });
}

/**
 * The Cap'n Web transport for callables. Enable it with one line:
 * `new WebSockets({ callables, capnweb })`. Clients choose it with
 * `transport: "capnweb"`; their calls then return live stubs for RpcTarget
 * results, pipeline, and stream natively. These sessions keep the object in
 * memory while they are open (no hibernation).
 */
export const capnweb: CapnwebTransport = { accept };
