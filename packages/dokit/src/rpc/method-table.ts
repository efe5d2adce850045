import { RpcTarget } from "cloudflare:workers";
import { DokitError } from "../lifecycle/errors";
import { CAPNWEB_PIPE } from "../protocol/capnweb";
import type { CallableName } from "./stub-types";
import type { RpcErrorCode } from "./errors";

/** A method a client may call. */
export type CallableMethod = (...args: unknown[]) => unknown;

/** Names a callables target may not declare: they would break awaiting the stub or the Cap'n Web pipe. */
const FORBIDDEN = new Set(["then", CAPNWEB_PIPE]);
/** A class's callable methods: the table, and its names (nearest class first, each in declaration order). */
export interface MethodTable {
  readonly methods: Readonly<Record<string, CallableMethod>>;
  /** The table's keys, listed once: reading them costs nothing on a wake. */
  readonly names: readonly string[];
}
/** Method tables by class prototype: built once per class, not on every construction (every wake). */
const tables = new WeakMap<object, MethodTable>();

/**
 * Builds the table of methods a client may call: methods declared on the
 * target's class prototype chain below RpcTarget (the nearest declaration
 * wins). Not instance fields or arrow functions, not getters, not
 * `constructor`, nothing named like a member of Object.prototype or
 * RpcTarget.prototype. The table has a null prototype, so a wire name can
 * never reach an inherited member.
 * @param target - an instance of a class that extends RpcTarget
 * @returns the method table and its names, built once per class (read-only: shared by every instance)
 * @throws DokitError INVALID_TARGET when the target is no RpcTarget or declares `then` / `__cf_agent_send`
 */
export function collectCallableMethods(target: object): MethodTable {
  // A prototype with a table is an RpcTarget subclass's, checked when the table was built: a
  // wake (a later instance of the class) skips the instanceof check on the platform's class.
  const known = target === null || target === undefined ? undefined : tables.get(Object.getPrototypeOf(target));
  if (known) return known;
  if (!(target instanceof RpcTarget)) {
    throw new DokitError<RpcErrorCode>(
      "INVALID_TARGET",
      `callables must be an instance of a class that extends RpcTarget from cloudflare:workers; got ${describe(target)}`,
    );
  }
  const prototype: object = Object.getPrototypeOf(target);
  const methods = buildTable(target, prototype);
  const table: MethodTable = { methods, names: Object.freeze(Object.keys(methods)) };
  tables.set(prototype, table);
  return table;
}

function buildTable(target: object, prototype: object): Record<string, CallableMethod> {
  const table: Record<string, CallableMethod> = Object.create(null);
  const seen = new Set<string>();
  for (let proto = prototype; proto !== RpcTarget.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (FORBIDDEN.has(name)) {
        throw new DokitError<RpcErrorCode>(
          "INVALID_TARGET",
          `${target.constructor.name} declares "${name}", a name callables may not expose; rename it`,
        );
      }
      if (seen.has(name)) continue;
      seen.add(name);
      // RpcTarget.prototype's chain holds `constructor` and every Object.prototype name.
      if (name in RpcTarget.prototype) continue;
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      // SAFETY: a data property holding a function; clients pass JSON arguments, checked by the method or a schema.
      if (typeof descriptor?.value === "function") table[name] = descriptor.value as CallableMethod;
    }
  }
  return table;
}

function describe(value: unknown): string {
  return value !== null && typeof value === "object" ? `an instance of ${value.constructor?.name}` : String(value);
}
