import { RpcTarget } from "cloudflare:workers";
import { DokitError } from "../lifecycle/errors";

/** A method a client may call. */
export type RemoteMethod = (...args: unknown[]) => unknown;

/** Names a callables target may not declare: they would break awaiting the stub or the Cap'n Web pipe. */
const FORBIDDEN = ["then", "__cf_agent_send"];

/**
 * Builds the table of methods a client may call: methods declared on the
 * target's class prototype chain below RpcTarget. Not instance fields or arrow
 * functions, not getters, not `constructor`, nothing from Object.prototype or
 * RpcTarget.prototype. The table has a null prototype, so a wire name can
 * never reach an inherited member.
 * @param target - the callables object
 * @returns the method table, built once
 */
export function methodTable(target: object): Record<string, RemoteMethod> {
  const table: Record<string, RemoteMethod> = Object.create(null);
  for (
    let proto = Object.getPrototypeOf(target);
    proto !== null && proto !== Object.prototype && proto !== RpcTarget.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (FORBIDDEN.includes(name)) {
        throw new DokitError(
          "INVALID_TARGET",
          `${target.constructor.name} declares "${name}", which a callables target may not expose (it would break awaiting the client stub or the Cap'n Web pipe); rename it`,
        );
      }
      if (name === "constructor" || name in table) continue;
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      if (typeof descriptor?.value === "function") table[name] = descriptor.value as RemoteMethod;
    }
  }
  return table;
}
