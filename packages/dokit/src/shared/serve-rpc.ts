// The JSON-rpc part of callables: a method table served over `rpc` frames.
// `dokit/websockets` carries this much (and no more) for the short form
// `new WebSockets({ callables: target })`; argument schemas and the standalone
// capability live in `callables/`.
import type { CallableSource, Claims, Dispatch } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { errorMessage, WireError } from "../lifecycle/errors";
import { isRpcRequest, RPC, rpcErrors } from "../protocol/frames";
import { type CallableMethod, collectCallableMethods } from "./method-table";
import { sendError, sendResult } from "./rpc-answer";

/** The methods of an RpcTarget, called without argument checks. */
export class TargetCallables implements CallableSource {
  /** The object whose methods clients call. */
  readonly target: object;
  readonly #methods: Record<string, CallableMethod>;

  /** @throws DokitError INVALID_TARGET for a target that is no RpcTarget or declares `then` / `__cf_agent_send` */
  constructor(target: object) {
    this.target = target;
    this.#methods = collectCallableMethods(target);
  }

  get methodNames(): string[] {
    return Object.keys(this.#methods);
  }

  /**
   * Calls a method; a thrown error is logged with its stack (wire errors are not).
   * @param check - turns the client's arguments into the method's (argument schemas)
   * @throws WireError METHOD_NOT_FOUND (`Method <name> does not exist`), or what `check` or the method throws
   */
  async invoke(name: string, args: unknown[], check?: (args: unknown[]) => Promise<unknown[]>): Promise<unknown> {
    const method = this.#methods[name];
    if (!method) throw new WireError("METHOD_NOT_FOUND", rpcErrors.notFound(name));
    try {
      return await method.apply(this.target, check ? await check(args) : args);
    } catch (error) {
      // A Refusal (code REFUSED) is expected: one line. Other wire errors are the protocol's answers.
      if (!(error instanceof WireError)) console.error(`dokit: callable ${name} threw`, error);
      else if (error.code === "REFUSED") console.info(`dokit: callable ${name} refused: ${error.message}`);
      throw error;
    }
  }
}

/**
 * Claims the method names of `source` and the `rpc` frame type: each call runs
 * with the calling connection in context and is answered by id. Calls reach every
 * claimed method through the dispatch table.
 */
export function serveRpc(claims: Claims, source: CallableSource): void {
  for (const name of source.methodNames) claims.method(name, source);
  const dispatch = claims.dispatch;
  // {"type":"rpc","id":"<uuid>","method":"<name>","args":[…]}
  claims.frame(RPC, async (connection, frame) => {
    if (!isRpcRequest(frame)) return false;
    const { id, method } = frame;
    // Timed only while someone listens on agents:rpc (0: nobody did when the call came in).
    const observer = dispatch.observer;
    const began = observer?.since("rpc");
    let result: unknown;
    try {
      // No scope of its own: frames are dispatched inside their connection's context already
      // (WebSockets enters it once per message; a Cap'n Web session runs in it).
      result = await invokeClaimed(dispatch, method, frame.args);
    } catch (error) {
      sendError(connection, id, errorMessage(error));
      if (observer && began) observer.rpc(claims.lifecycle, connection, method, began, true, error);
      return true;
    }
    const sent = await sendResult(connection, id, method, result);
    if (observer && began) observer.rpc(claims.lifecycle, connection, method, began, typeof sent === "string", sent);
    return true;
  });
}

/**
 * Calls a claimed method through the source that claimed it (every transport calls through here).
 * @throws WireError METHOD_NOT_FOUND (`Method <name> does not exist`), or what the method throws
 */
export function invokeClaimed(dispatch: Dispatch, name: string, args: unknown[]): Promise<unknown> {
  const source = dispatch.method(name);
  return source ? source.invoke(name, args) : Promise.reject(new WireError("METHOD_NOT_FOUND", rpcErrors.notFound(name)));
}

/** Answers an rpc frame nothing claimed with `Method <name> does not exist`, so client calls never hang. */
export function answerUnclaimedRpc(connection: Connection, frame: Record<string, unknown>): boolean {
  if (!isRpcRequest(frame)) return false;
  sendError(connection, frame.id, rpcErrors.notFound(frame.method));
  return true;
}
