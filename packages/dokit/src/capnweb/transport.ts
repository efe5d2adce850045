import { refuseUpgrade } from "../lifecycle/refuse";
import { type Wakeable, WORKS_UNATTACHED } from "../lifecycle/wake";
import { CAPNWEB, TRANSPORT_PARAM } from "../protocol/capnweb";
import { CLOSE_INVALID_ID, INVALID_ID_REASON } from "../protocol/close-codes";
import type { CapnwebTransport, TransportHost } from "../websockets/options";
import type { PluginDoor } from "../websockets/plugin";
import { CLOSE_REPLACED, REPLACED_REASON, Session, sessionOf } from "./session";

/**
 * Accepts an upgrade with `__agents_transport=capnweb`: a plain accepted
 * WebSocket carrying a Cap'n Web session. A session with the id of an open
 * one replaces it (the old one is closed with 1001 `Session replaced`); it also
 * replaces a hibernating connection with that id (closed with 4009 `Connection replaced`).
 */
async function accept(request: Request, host: TransportHost): Promise<Response> {
  const id = host.connectionId(request);
  if (id === undefined) return refuseUpgrade(CLOSE_INVALID_ID, INVALID_ID_REASON);

  const previous = host.find(id);
  if (previous) {
    const session = sessionOf(previous);
    if (session) await session.end(CLOSE_REPLACED, REPLACED_REASON, true);
    else previous.close(CLOSE_REPLACED, REPLACED_REASON);
  }
  host.replaceSocket(id);

  const { 0: client, 1: server } = new WebSocketPair();
  server.accept();
  const session = new Session(server, id, request, host);
  await session.open(request);
  return new Response(null, { status: 101, webSocket: client });
}

/**
 * The Cap'n Web transport for callables. Enable it with one line:
 * `new WebSockets({ callables, capnweb })`. Clients choose it with
 * `transport: "capnweb"`; their calls then return live stubs for RpcTarget
 * results, pipeline, and stream natively. These sessions keep the object in
 * memory while they are open (no hibernation).
 *
 * A plug-in of WebSockets' door holding no state of its own (one object serves every WebSockets):
 * it claims the upgrades that ask for it and serves them through the door's transport handle.
 */
export const capnweb: CapnwebTransport = {
  pluginName: "capnweb",
  plug(door: PluginDoor): void {
    door.claims.upgrade((request) => (new URL(request.url).searchParams.get(TRANSPORT_PARAM) === CAPNWEB ? accept(request, door.transport()) : undefined));
  },
  // Its hook runs only on an upgrade, which wires the object: it leaves wakes to socket events unwired.
  [WORKS_UNATTACHED]: true,
} as CapnwebTransport & Wakeable;
