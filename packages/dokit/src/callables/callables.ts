import type { Capability, Claims } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { runInContext } from "../lifecycle/context";
import { DokitError } from "../lifecycle/errors";
import { isRpcRequest, RPC, rpcErrors } from "../protocol/frames";
import { errorMessage, sendError, sendResult } from "./answer";
import { methodTable, type RemoteMethod } from "./methods";
import { describeIssues, isStandardSchema, type StandardSchema } from "./schema";

/** Argument schemas for some methods: names in call order, each a Standard Schema (zod 4, valibot, …). */
export type ArgumentSchemas<T> = {
  [K in keyof T]?: T[K] extends (...args: never[]) => unknown ? Record<string, StandardSchema> : never;
};

/** Options of {@link Callables}. */
export interface CallablesOptions<T> {
  /**
   * Per-method argument schemas, checked before the method runs; the parsed
   * values are what the method receives. Key order is argument order:
   * `{ moveCard: { id: z.string(), column: z.number().int() } }`.
   */
  args?: ArgumentSchemas<T>;
}

/**
 * Lets clients call the methods of an `RpcTarget` over `rpc` frames. The
 * target is the complete remote interface.
 */
export class Callables<T extends object = object> implements Capability {
  readonly capabilityName = "Callables";
  /** The object whose methods clients call. */
  readonly target: T;
  readonly #methods: Record<string, RemoteMethod>;
  readonly #schemas: Record<string, [string, StandardSchema][]>;

  /**
   * @param target - an `RpcTarget` whose class declares the callable methods
   * @param options - optional argument schemas
   */
  constructor(target: T, options: CallablesOptions<T> = {}) {
    this.target = target;
    this.#methods = methodTable(target);
    this.#schemas = Object.create(null);
    for (const [method, schemas] of Object.entries(options.args ?? {}) as [string, Record<string, unknown>][]) {
      if (!(method in this.#methods)) {
        throw new DokitError("INVALID_TARGET", `argument schemas name "${method}", which ${target.constructor.name} does not declare`);
      }
      for (const [name, schema] of Object.entries(schemas)) {
        if (!isStandardSchema(schema)) {
          throw new DokitError("INVALID_ARGUMENT", `the schema for argument "${name}" of ${method} is not a Standard Schema (zod 4, valibot, arktype)`);
        }
      }
      this.#schemas[method] = Object.entries(schemas) as [string, StandardSchema][];
    }
  }

  /** The names clients may call. */
  get methodNames(): string[] {
    return Object.keys(this.#methods);
  }

  /** @returns the method clients reach by `name`, or `undefined` */
  method(name: string): RemoteMethod | undefined {
    return this.#methods[name];
  }

  attach(claims: Claims): void {
    for (const name of this.methodNames) claims.method(name);
    // {"type":"rpc","id":"<uuid>","method":"<name>","args":[…]}
    claims.frame(RPC, (connection, frame) => {
      if (!isRpcRequest(frame)) return false;
      return this.#answer(connection, frame.id, frame.method, frame.args).then(() => true);
    });
  }

  /**
   * Runs a method for a connection and sends its answer (result, stream or error).
   * @param connection - the caller; `getCurrentAgent().connection` inside the method
   */
  async #answer(connection: Connection, id: string, name: string, args: unknown[]): Promise<void> {
    let result: unknown;
    try {
      result = await runInContext({ connection }, () => this.invoke(name, args));
    } catch (error) {
      if (!(error instanceof DokitError && error.code === "METHOD_NOT_FOUND")) {
        console.error(`dokit: callable ${name} threw`, error);
      }
      return sendError(connection, id, errorMessage(error));
    }
    await sendResult(connection, id, name, result);
  }

  /**
   * Checks the arguments and calls a method (any transport uses this).
   * @throws DokitError METHOD_NOT_FOUND with the protocol's text, or INVALID_ARGUMENT naming the argument
   * @returns the method's result
   */
  async invoke(name: string, args: unknown[]): Promise<unknown> {
    const method = this.#methods[name];
    if (!method) throw new MethodNotFound(name);
    const schemas = this.#schemas[name];
    if (schemas) args = await checkArguments(name, schemas, args);
    return method.apply(this.target, args);
  }
}

/** The exact protocol text, `Method <name> does not exist`, with a stable code. */
class MethodNotFound extends DokitError {
  constructor(name: string) {
    super("METHOD_NOT_FOUND", rpcErrors.notFound(name));
    // The client shows this text as is: no library prefix.
    this.message = rpcErrors.notFound(name);
  }
}

async function checkArguments(method: string, schemas: [string, StandardSchema][], args: unknown[]): Promise<unknown[]> {
  const parsed = [...args];
  for (const [index, [name, schema]] of schemas.entries()) {
    const result = await schema["~standard"].validate(args[index]);
    if (result.issues) {
      throw new DokitError(
        "INVALID_ARGUMENT",
        `invalid argument ${index + 1} (${name}) of ${method}: ${describeIssues(result.issues)}`,
      );
    }
    parsed[index] = result.value;
  }
  return parsed;
}

/** Sends `Method <name> does not exist` for an rpc frame no Callables claimed (every call gets an answer). */
export function answerUnclaimedRpc(connection: Connection, frame: Record<string, unknown>): boolean {
  if (!isRpcRequest(frame)) return false;
  sendError(connection, frame.id, rpcErrors.notFound(frame.method));
  return true;
}
