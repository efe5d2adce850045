import type { CallableSource, Capability, Claims } from "../lifecycle/capability";
import { DokitError, WireError } from "../lifecycle/errors";
import type { CallableName } from "../rpc/stub-types";
import { describeIssues, isStandardSchema, type StandardSchema } from "../schema/standard-schema";
import { serveRpc, TargetCallables } from "../rpc/serve-rpc";
import { type Wakeable, WORKS_UNATTACHED } from "../lifecycle/wake";
import type { CallablesErrorCode } from "./errors";

/**
 * Argument schemas for some methods: for each, the argument names in call
 * order, each with a Standard Schema (zod 4, valibot, arktype).
 */
export type ArgumentSchemas<T> = { [K in CallableName<T>]?: Record<string, StandardSchema> };

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
 * Lets clients call the methods of an `RpcTarget` over `rpc` frames (and over
 * Cap'n Web with `dokit/capnweb`). The target is the complete remote interface.
 * `new WebSockets({ callables: target })` serves the same methods without
 * argument schemas; pass `new Callables(target, { args })` there for schemas.
 */
export class Callables<T extends object = object> implements Capability, CallableSource {
  readonly capabilityName = "Callables";
  /** The object whose methods clients call. */
  readonly target: T;
  readonly #methods: TargetCallables;
  readonly #schemas: Record<string, [string, StandardSchema][]> = Object.create(null);

  /**
   * @param target - an instance of a class that extends `RpcTarget`; its class declares the callable methods
   * @param options - optional argument schemas
   * @throws DokitError INVALID_TARGET for a target that is no RpcTarget or declares `then` / `__cf_agent_send`
   */
  constructor(target: T, options: CallablesOptions<T> = {}) {
    this.target = target;
    this.#methods = new TargetCallables(target);
    // SAFETY: ArgumentSchemas maps method names to records of schemas; checked value by value below.
    for (const [method, schemas] of Object.entries(options.args ?? {}) as [string, Record<string, unknown>][]) {
      if (!this.#methods.methodNames.includes(method)) {
        throw new DokitError<CallablesErrorCode>("INVALID_TARGET", `argument schemas name "${method}", which ${target.constructor.name} does not expose`);
      }
      for (const [name, schema] of Object.entries(schemas)) {
        if (!isStandardSchema(schema)) {
          throw new DokitError<CallablesErrorCode>(
            "INVALID_ARGUMENT",
            `the schema for argument "${name}" of ${method} is not a Standard Schema (zod 4, valibot, arktype)`,
          );
        }
      }
      // SAFETY: every value was just checked with isStandardSchema.
      this.#schemas[method] = Object.entries(schemas) as [string, StandardSchema][];
    }
  }

  /** The names clients may call (a new array on each read). */
  get methodNames(): string[] {
    return [...this.#methods.methodNames];
  }

  attach(claims: Claims): void {
    serveRpc(claims, this);
  }

  /**
   * Checks the arguments and calls a method; every transport calls through here.
   * Run it inside the caller's context (`getCurrentAgent().connection`). A thrown
   * error is logged with its stack, except the wire errors below.
   * @throws DokitError METHOD_NOT_FOUND (`Method <name> does not exist`), INVALID_ARGUMENT naming the argument, or what the method throws
   * @returns the method's result: as it is for a synchronous method without schemas, else a promise
   */
  invoke(name: string, args: unknown[]): unknown {
    const schemas = this.#schemas[name];
    return this.#methods.invoke(name, args, schemas && ((given) => checkArguments(name, schemas, given)));
  }
}

async function checkArguments(method: string, schemas: [string, StandardSchema][], args: unknown[]): Promise<unknown[]> {
  const parsed = [...args];
  for (const [index, [name, schema]] of schemas.entries()) {
    const result = await schema["~standard"].validate(args[index]);
    if (result.issues) {
      throw new WireError<CallablesErrorCode>("INVALID_ARGUMENT", `Invalid argument ${name} of ${method}: ${describeIssues(result.issues)}`);
    }
    parsed[index] = result.value;
  }
  return parsed;
}

// Works before it is attached (lifecycle/wake.ts): it claims rpc frames and methods alone.
(Callables.prototype as Wakeable)[WORKS_UNATTACHED] = true;
