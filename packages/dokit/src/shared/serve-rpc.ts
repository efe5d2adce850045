// The JSON-rpc part of callables: a method table served over `rpc` frames.
// `dokit/websockets` carries this much (and no more) for the short form
// `new WebSockets({ callables: target })`; argument schemas and the standalone
// capability live in `callables/`.
import type { CallableSource, Claims } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { runInContext } from "../lifecycle/context";
import { errorMessage, Refusal, WireError } from "../lifecycle/errors";
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
      if (error instanceof Refusal) console.info(`dokit: callable ${name} refused: ${error.message}`);
      else if (!(error instanceof WireError)) console.error(`dokit: callable ${name} threw`, error);
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
  const callables = claims.dispatch.callables;
  // {"type":"rpc","id":"<uuid>","method":"<name>","args":[…]}
  claims.frame(RPC, async (connection, frame) => {
    if (!isRpcRequest(frame)) return false;
    const { id, method } = frame;
    let result: unknown;
    try {
      result = await runInContext({ connection }, () => callables.invoke(method, frame.args));
    } catch (error) {
      sendError(connection, id, errorMessage(error));
      return true;
    }
    await sendResult(connection, id, method, result);
    return true;
  });
}

/** Answers an rpc frame nothing claimed with `Method <name> does not exist`, so client calls never hang. */
export function answerUnclaimedRpc(connection: Connection, frame: Record<string, unknown>): boolean {
  if (!isRpcRequest(frame)) return false;
  sendError(connection, frame.id, rpcErrors.notFound(frame.method));
  return true;
}
