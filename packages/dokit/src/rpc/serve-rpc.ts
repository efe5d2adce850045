// The JSON-rpc part of callables: a method table served over `rpc` frames.
// `dokit/websockets` carries this much (and no more) for the short form
// `new WebSockets({ callables: target })`; argument schemas and the standalone
// capability live in `callables/`.
import type { CallableSource, Claims, Dispatch, Observer } from "../lifecycle/capability";
import type { Lifecycle } from "../lifecycle/lifecycle";
import type { Connection } from "../lifecycle/connection";
import { inConnectionContext } from "../lifecycle/context";
import { errorMessage, WireError } from "../lifecycle/errors";
import { isRpcRequest, RPC, rpcErrors } from "../protocol/agents";
import { type CallableMethod, collectCallableMethods } from "./method-table";
import { publishRpc } from "./events";
import { sendError, sendResult } from "./rpc-answer";
import { isThenable } from "../thenable/is-thenable";
import type { RpcErrorCode } from "./errors";

/** The methods of an RpcTarget, called without argument checks. */
export class TargetCallables implements CallableSource {
  /** The object whose methods clients call. */
  readonly target: object;
  readonly #methods: Readonly<Record<string, CallableMethod>>;
  /** The names clients may call (listed once per class). */
  readonly methodNames: readonly string[];

  /** @throws DokitError INVALID_TARGET for a target that is no RpcTarget or declares `then` / `__cf_agent_send` */
  constructor(target: object) {
    this.target = target;
    const table = collectCallableMethods(target);
    this.#methods = table.methods;
    this.methodNames = table.names;
  }

  /**
   * Calls a method; a thrown error is logged with its stack (wire errors are not).
   * @param check - turns the client's arguments into the method's (argument schemas)
   * @returns the method's result: as it is for a synchronous method, else a promise
   * @throws WireError METHOD_NOT_FOUND (`Method <name> does not exist`), or what `check` or the method throws (or rejects with)
   */
  invoke(name: string, args: unknown[], check?: (args: unknown[]) => Promise<unknown[]>): unknown {
    const method = this.#methods[name];
    if (!method) throw new WireError<RpcErrorCode>("METHOD_NOT_FOUND", rpcErrors.notFound(name));
    try {
      const result = check ? check(args).then((checked) => method.apply(this.target, checked)) : method.apply(this.target, args);
      return isThenable(result) ? Promise.resolve(result).catch((error: unknown) => Promise.reject(logThrown(name, error))) : result;
    } catch (error) {
      throw logThrown(name, error);
    }
  }
}

/** Logs what a callable threw (a Refusal, code REFUSED, is expected: one line; other wire errors are the protocol's answers). @returns the error */
function logThrown(name: string, error: unknown): unknown {
  if (!(error instanceof WireError)) console.error(`dokit: callable ${name} threw`, error);
  else if (error.code === "REFUSED") console.info(`dokit: callable ${name} refused: ${error.message}`);
  return error;
}

/**
 * Claims the method names of `source` and the `rpc` frame type: each call runs
 * with the calling connection in context and is answered by id. Calls reach every
 * claimed method through the dispatch table.
 */
export function serveRpc(claims: Claims, source: CallableSource): void {
  for (const name of source.methodNames) claims.method(name, source);
  const dispatch = claims.dispatch;
  const agent = claims.lifecycle.host;
  // {"type":"rpc","id":"<uuid>","method":"<name>","args":[…]}
  // Only the method runs in the connection's context (`ownContext`): parsing the frame, finding the
  // method and sending the answer do not need it, and the runtime pays more for work done inside a
  // context. The handler is passed inline: a named closure costs a name definition on every wake
  // in bundles that keep function names (wrangler's do).
  claims.frame(
    RPC,
    (connection, frame) => {
      if (!isRpcRequest(frame)) return false;
      const { id, method } = frame;
      // Timed only while someone listens on agents:rpc (0: nobody did when the call came in).
      const observer = dispatch.observer;
      const began = observer?.since("rpc");
      let result: unknown;
      try {
        result = inConnectionContext(agent, connection, invokeClaimed, dispatch, method, frame.args);
      } catch (error) {
        const unknown = error instanceof WireError && error.code === "METHOD_NOT_FOUND" && !dispatch.method(method);
        result = Promise.reject(unknown ? new WireError<RpcErrorCode>("METHOD_NOT_FOUND", notFound(method, agent)) : error);
      }
      // A synchronous method, nobody timing: answered at once, without a promise.
      if (!began && !isThenable(result)) {
        const sent = sendResult(connection, id, method, result);
        return typeof sent === "object" ? sent.then(() => true) : true;
      }
      return answerLater(claims.lifecycle, connection, id, method, result, observer, began);
    },
    // A call is the first message after many wakes: it wires a waiting object (lifecycle/wake.ts).
    { ownContext: true, needsWiring: true },
  );
}

/** Answers a call whose result is a promise, or that is timed for agents:rpc. */
async function answerLater(
  lifecycle: Lifecycle,
  connection: Connection,
  id: string,
  method: string,
  pending: unknown,
  observer: Observer | undefined,
  began: number | undefined,
): Promise<true> {
  let result: unknown;
  try {
    result = await pending;
  } catch (error) {
    sendError(connection, id, errorMessage(error));
    if (observer && began) publishRpc(observer, lifecycle, connection, method, began, true, error);
    return true;
  }
  const answer = sendResult(connection, id, method, result);
  const sent = typeof answer === "object" ? await answer : answer; // a promise only for a stream
  if (observer && began) publishRpc(observer, lifecycle, connection, method, began, typeof sent === "string", sent);
  return true;
}

/**
 * Calls a claimed method through the source that claimed it (every transport calls through here).
 * @returns the result, or a promise of it
 * @throws WireError METHOD_NOT_FOUND (`Method <name> does not exist`), or what the method throws (or rejects with)
 */
export function invokeClaimed(dispatch: Dispatch, name: string, args: unknown[]): unknown {
  const source = dispatch.method(name);
  if (!source) throw new WireError<RpcErrorCode>("METHOD_NOT_FOUND", rpcErrors.notFound(name));
  return source.invoke(name, args);
}

/** Answers an rpc frame nothing claimed with `Method <name> does not exist`, so client calls never hang. */
export function answerUnclaimedRpc(connection: Connection, frame: Record<string, unknown>, agent: object): boolean {
  if (!isRpcRequest(frame)) return false;
  sendError(connection, frame.id, notFound(frame.method, agent));
  return true;
}

/**
 * `Method <name> does not exist` (the protocol's text), followed by what to do when `name` is a
 * method of the Durable Object itself: clients call its callables, never the object's own methods.
 */
function notFound(name: string, agent: object): string {
  const text = rpcErrors.notFound(name);
  return Object.hasOwn(Object.prototype, name) || typeof (agent as Record<string, unknown>)[name] !== "function"
    ? text
    : `${text}: ${name} is a method of the Durable Object; clients call the methods of new WebSockets({ callables })`;
}
