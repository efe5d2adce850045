// The JSON-rpc part of Callables: a method table served over `rpc` frames.
// `dokit/websockets` carries this much (and no more) for the short form
// `new WebSockets({ callables: target })`, as DESIGN.md allows; argument
// schemas and the standalone capability live in callables.ts.
import type { Claims } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { runInContext } from "../lifecycle/context";
import { DokitError, type DokitErrorCode, errorMessage } from "../lifecycle/errors";
import { isRpcRequest, RPC, rpcErrors } from "../protocol/frames";
import { sendError, sendResult } from "./answer";
import { methodTable, type RemoteMethod } from "./methods";

/** What every transport calls through: the names clients may call, and a call. */
export interface RemoteMethods {
  /** The names clients may call. */
  readonly methodNames: string[];
  /** Calls a method inside the caller's context. @throws what the method throws, or a wire error */
  invoke(name: string, args: unknown[]): Promise<unknown>;
}

/** A DokitError whose message clients see as is (no library prefix), and which is not logged. */
export class WireError extends DokitError {
  constructor(code: DokitErrorCode, text: string) {
    super(code, text);
    this.message = text;
  }
}

/** The methods of an RpcTarget, called without argument checks. */
export class TargetMethods implements RemoteMethods {
  /** The object whose methods clients call. */
  readonly target: object;
  readonly #methods: Record<string, RemoteMethod>;

  /** @throws DokitError INVALID_TARGET for a target that is no RpcTarget or declares `then` / `__cf_agent_send` */
  constructor(target: object) {
    this.target = target;
    this.#methods = methodTable(target);
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
      if (!(error instanceof WireError)) console.error(`dokit: callable ${name} threw`, error);
      throw error;
    }
  }
}

/**
 * Claims the `rpc` frame type and the method names for `methods`: each call
 * runs with the calling connection in context and is answered by id.
 */
export function serveRpc(claims: Claims, methods: RemoteMethods): void {
  for (const name of methods.methodNames) claims.method(name);
  // {"type":"rpc","id":"<uuid>","method":"<name>","args":[…]}
  claims.frame(RPC, async (connection, frame) => {
    if (!isRpcRequest(frame)) return false;
    const { id, method } = frame;
    let result: unknown;
    try {
      result = await runInContext({ connection }, () => methods.invoke(method, frame.args));
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
