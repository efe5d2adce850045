// The entry points Lifecycle.install puts on a host class's prototype, and how each finds the
// instance's lifecycle.
import { DurableObject } from "cloudflare:workers";
import { CLOSE_NO_WEBSOCKETS, NO_WEBSOCKETS_REASON } from "../protocol/close-codes";
import { DokitError } from "./errors";
import type { LifecycleErrorCode } from "./errors";
import type { Lifecycle } from "./lifecycle";
import type { EntryPoint } from "./options";
import { refuseUpgrade } from "./refuse";
import type { WakePlan } from "./wake";
import { isUpgrade } from "./requests";

const NOT_FOUND = () => new Response("Not found", { status: 404 });
/**
 * The answer to an upgrade nothing claims: a socket closed with 4501 and a reason naming the
 * capability to install; the log names the class too.
 */
function upgradeNotClaimed(className: string): Response {
  console.warn(`${NO_WEBSOCKETS_REASON} (class ${className})`);
  return refuseUpgrade(CLOSE_NO_WEBSOCKETS, NO_WEBSOCKETS_REASON);
}

/** Where a host keeps its lifecycle, for the entry points below. */
export const INSTALLED = Symbol("dokit.lifecycle");
export type Installed = { [INSTALLED]?: Lifecycle };

/**
 * The entry points `install` puts on the host's class prototype, once per class: each finds
 * the instance's lifecycle and forwards. Shared by every class, so an object built on a wake
 * creates no functions and defines no properties for them (one symbol-keyed field instead).
 * The socket events go straight to the socket owner (the Lifecycle class adds them, as they
 * call its private `#socketEvent`): a message handled synchronously returns no promise for the
 * runtime to wait on.
 */
export const ENTRY_POINT_METHODS: Record<EntryPoint, unknown> = {
  fetch: async function (this: Installed, request: Request): Promise<Response> {
    const lifecycle = installedOn(this);
    return (await lifecycle.fetch(request)) ?? (isUpgrade(request) ? upgradeNotClaimed(lifecycle.className) : NOT_FOUND());
  },
  alarm: function (this: Installed, info?: AlarmInvocationInfo): Promise<void> {
    return installedOn(this).alarm(info);
  },
  webSocketMessage: undefined,
  webSocketClose: undefined,
  webSocketError: undefined,
};
export const SOCKET_EVENTS = { webSocketMessage: "message", webSocketClose: "close", webSocketError: "error" } as const;

/** A socket event's outcome: `true` when a capability handled it; a promise while it is handled. */
export type SocketOutcome = true | undefined | Promise<true | undefined>;
export type SocketEventName = "message" | "close" | "error";

export function installedOn(host: Installed): Lifecycle {
  const lifecycle = host[INSTALLED];
  if (!lifecycle) throw new DokitError<LifecycleErrorCode>("NOT_INSTALLED", `this ${host.constructor.name} did not call Lifecycle.install(this)`);
  return lifecycle;
}

/** @returns whether the host's class (below DurableObject) or the host itself defines `name` */
export function definedByHost(host: object, name: string): boolean {
  for (let proto = Object.getPrototypeOf(host); proto && proto !== DurableObject.prototype; proto = Object.getPrototypeOf(proto)) {
    if (Object.hasOwn(proto, name)) return true;
  }
  return Object.hasOwn(host, name);
}

/**
 * What the first instance of a host class found, for the instances built after it (every wake
 * builds one): an instance naming the same delegates skips the checks, the name's conversion and
 * the entry-point loop that first instance already made for the class. Other delegates take the
 * whole path.
 */
export interface InstalledClass {
  /** The class name in kebab case. */
  readonly className: string;
  /** The delegates that instance named, as one string (`${options.delegates}`). */
  readonly delegates: string;
  /** Its wiring: a plan, `null` when the class's objects are wired at once, `undefined` until its first object starts. */
  plan: WakePlan | null | undefined;
}
export const installedClasses = new WeakMap<object, InstalledClass>();
