import { RpcTarget } from "cloudflare:workers";
import { newWebSocketRpcSession } from "capnweb";
import type { Connection } from "../lifecycle/connection";
import { type CurrentAgent, runInContext } from "../lifecycle/context";
import { CAPNWEB_PIPE } from "../protocol/capnweb";
import { CLOSE_OPEN_FAILED, OPEN_FAILED_REASON } from "../protocol/close-codes";
import { publishRpc } from "../rpc/events";
import { invokeClaimed } from "../rpc/serve-rpc";
import { closeWith } from "../frames/close";
import type { TransportHost } from "../websockets/options";
import { LiveSocket } from "./live-socket";

/** The close a session gets when another one opens with the same connection id. */
export const CLOSE_REPLACED = 1001;
export const REPLACED_REASON = "Session replaced";

/** The client's main object: every server frame is delivered by calling `message(frame)`. */
interface ClientMain {
  message(frame: string | Uint8Array): void;
}

// The session of each Cap'n Web connection, so a replaced one can be ended and awaited.
const sessions = new WeakMap<Connection, Session>();

/** @returns the session behind a connection, when it is a Cap'n Web connection */
export function sessionOf(connection: Connection): Session | undefined {
  return sessions.get(connection);
}

/**
 * One Cap'n Web session on an accepted (non-hibernating) WebSocket, and the
 * Connection it appears as in WebSockets. The main object offered to the
 * client exposes every callable plus the frame pipe; frames the object sends
 * reach the client through its main object's `message(frame)`.
 */
export class Session {
  /** The connection handlers, `getConnections()` and broadcasts see. */
  readonly connection: Connection;
  readonly #server: WebSocket;
  readonly #socket: LiveSocket;
  readonly #host: TransportHost;
  readonly #scope: Partial<CurrentAgent>;
  readonly #remote: ReturnType<typeof newWebSocketRpcSession<ClientMain>>;
  #ending: Promise<void> | undefined;

  /**
   * Starts the session (call `open` next, which lists its connection).
   * @param server - the server end of a WebSocketPair, already accepted
   * @param id - the connection id
   * @param request - the upgrade request
   * @param host - the handle of the WebSockets whose handlers, connection list and dispatch the session uses
   */
  constructor(server: WebSocket, id: string, request: Request, host: TransportHost) {
    this.#server = server;
    this.#host = host;
    this.#socket = new LiveSocket(request.url, {
      deliver: (frame) => this.#deliver(frame),
      close: (code, reason) => void this.end(code, reason, true),
    });
    // SAFETY: LiveSocket implements what WebSockets uses of a socket (send, close, readyState, attachment).
    this.connection = host.connection(this.#socket as unknown as WebSocket, id, request);
    sessions.set(this.connection, this);
    this.#scope = { agent: host.lifecycle.host, connection: this.connection, request: undefined };
    const main = mainObject(this.connection, host);
    // Cap'n Web's read loop starts here and every call it makes (callables, the pipe, methods of
    // returned stubs) continues from it, so they all see the object and this connection.
    this.#remote = runInContext(this.#scope, () => newWebSocketRpcSession<ClientMain>(server, main));
    server.addEventListener("close", (event) => void this.end(event.code, event.reason, event.wasClean));
    server.addEventListener("error", () => void this.end(1006, "", false));
  }

  /**
   * Accepts the connection as WebSockets accepts a hibernating socket (decisions,
   * listing, connect frames, `onConnect`). When that fails, the session is closed
   * with 4500 (the stack is logged, not sent).
   */
  async open(request: Request): Promise<void> {
    const { connection } = this;
    try {
      // Decisions first, then listed, then the connect frames and onConnect: a hibernating socket's order.
      await this.#host.decide(connection, { request });
      this.#host.track(connection);
      if (this.#ending) this.#host.untrack(connection); // the client left meanwhile
      await this.#host.greet(connection, { request });
    } catch (error) {
      console.error(`dokit: Cap'n Web connection ${this.connection.id} failed while opening; closing it with ${CLOSE_OPEN_FAILED}`, error);
      await this.end(CLOSE_OPEN_FAILED, OPEN_FAILED_REASON, true);
    }
  }

  /**
   * Ends the session once: closes the socket with `code` (or reciprocates the
   * client's close), drops the connection and runs `onClose`.
   * @returns a promise that settles when `onClose` has run
   */
  end(code: number, reason: string, wasClean: boolean): Promise<void> {
    this.#ending ??= this.#finish(code, reason, wasClean);
    return this.#ending;
  }

  async #finish(code: number, reason: string, wasClean: boolean): Promise<void> {
    this.#socket.readyState = this.#socket.CLOSED;
    this.#host.untrack(this.connection); // a no-op unless `open` listed it
    closeWith(this.#server, code, reason);
    try {
      // Closing first matters: disposing the main stub would close the socket with 3000.
      this.#remote[Symbol.dispose]();
    } catch {
      // The session is already broken.
    }
    try {
      await runInContext(this.#scope, () => this.#host.close(this.connection, code, reason, wasClean));
    } catch (error) {
      console.error(`dokit: onClose failed for Cap'n Web connection ${this.connection.id}`, error);
    }
  }

  #deliver(frame: string | ArrayBuffer | ArrayBufferView): void {
    const payload = typeof frame === "string" ? frame : bytes(frame);
    try {
      this.#remote.message(payload).catch((error: unknown) => {
        if (!this.#ending) console.error(`dokit: delivering a frame to Cap'n Web connection ${this.connection.id} failed`, error);
      });
    } catch (error) {
      if (!this.#ending) console.error(`dokit: delivering a frame to Cap'n Web connection ${this.connection.id} failed`, error);
    }
  }
}

/**
 * The main object offered to the client: one method per callable, plus the
 * frame pipe. Cap'n Web resolves methods on the prototype chain, so they are
 * defined on the prototype of a fresh RpcTarget subclass and nowhere else.
 */
function mainObject(connection: Connection, host: TransportHost): RpcTarget {
  class Main extends RpcTarget {}
  const define = (name: string, value: (...args: unknown[]) => unknown) =>
    Object.defineProperty(Main.prototype, name, { value, writable: true, configurable: true });
  for (const name of host.dispatch.methodNames()) define(name, (...args) => observed(host, connection, name, args));
  // __cf_agent_send(frame): state frames, JSON rpc frames and user messages, dispatched like a hibernating socket's.
  define(CAPNWEB_PIPE, async (frame) => {
    const message = typeof frame === "string" ? frame : isBinary(frame) ? arrayBuffer(frame) : undefined;
    if (message === undefined) throw new TypeError(`${CAPNWEB_PIPE} takes a string or binary frame`);
    try {
      await host.receive(connection, message);
    } catch (error) {
      // Like a hibernating socket's message: logged, and the client's pipe call still succeeds.
      console.error(`dokit: handling a Cap'n Web frame from connection ${connection.id} failed`, error);
    }
  });
  return new Main();
}

/** Invokes a claimed method, publishing `rpc` (and `rpc:error`) as an rpc frame's call does when agents:rpc has subscribers. */
async function observed(host: TransportHost, connection: Connection, name: string, args: unknown[]): Promise<unknown> {
  const observer = host.dispatch.observer;
  const began = observer?.since("rpc");
  if (!observer || !began) return invokeClaimed(host.dispatch, name, args);
  try {
    const result = await invokeClaimed(host.dispatch, name, args);
    publishRpc(observer, host.lifecycle, connection, name, began, false, undefined);
    return result;
  } catch (error) {
    publishRpc(observer, host.lifecycle, connection, name, began, true, error);
    throw error;
  }
}

function isBinary(value: unknown): value is ArrayBuffer | ArrayBufferView {
  return value instanceof ArrayBuffer || ArrayBuffer.isView(value);
}

function arrayBuffer(value: ArrayBuffer | ArrayBufferView): ArrayBuffer {
  if (value instanceof ArrayBuffer) return value;
  return new Uint8Array(value.buffer, value.byteOffset, value.byteLength).slice().buffer;
}

function bytes(value: ArrayBuffer | ArrayBufferView): Uint8Array {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}
