// The Cap'n Web transport (docs/protocol.md, "Cap'n Web transport"). Loaded with a
// dynamic import only when `transport: "capnweb"` is chosen, so clients on
// the default transport never download capnweb.
import { newWebSocketRpcSession, RpcTarget } from "capnweb";
import { CAPNWEB_PIPE } from "../protocol/capnweb";
import { sendInOrder } from "./binary";
import type { OpenLink } from "./link";
import { watchLifecycle } from "./link";

/** The client's main object: the server delivers every frame by calling `message(frame)`. */
class Inbox extends RpcTarget {
  readonly #deliver: (frame: unknown) => void;
  constructor(deliver: (frame: unknown) => void) {
    super();
    this.#deliver = deliver;
  }
  /** Receives one frame from the server. */
  message(frame: unknown): void {
    this.#deliver(frame);
  }
}

type Main = Record<string, (...args: unknown[]) => Promise<unknown>> & Disposable;

/** Opens a Cap'n Web session on a fresh WebSocket. */
export const openCapnWebLink: OpenLink = (url, events) => {
  // Frames arrive through the session (Inbox.message), not as socket messages.
  const socket = watchLifecycle(new WebSocket(url), events);
  // SAFETY: the server's main object exposes the callables plus `__cf_agent_send`; names are checked remotely.
  const main = newWebSocketRpcSession(socket, new Inbox((frame) => events.onFrame(frame))) as unknown as Main;
  return {
    socket,
    send: sendInOrder((frame) => {
      // A failed send means the session is gone; the socket's close event reports it.
      main[CAPNWEB_PIPE]!(frame).catch(() => {});
    }),
    invoke: async (method, args) => {
      const fn = main[method];
      return fn!(...args);
    },
    close: (code, reason) => {
      try {
        main[Symbol.dispose]();
      } catch {
        // Disposing an already broken session throws; the socket close below is what matters.
      }
      socket.close(code, reason);
    },
  };
};
