import { DurableObject } from "cloudflare:workers";
import { CLOSE_OPEN_FAILED, CLOSE_RESTARTING, OPEN_FAILED_REASON, RESTARTING_REASON } from "../protocol/close-codes";
import { kebab } from "../protocol/kebab";
import { isUpgrade } from "./requests";
import type { Capability, SocketOwner } from "./capability";
import { runInContext } from "./context";
import { DispatchTable } from "./dispatch";
import { DokitError, errorMessage } from "./errors";
import type { LifecycleErrorCode } from "./errors";
import { readProps, subPath } from "./headers";
import { refuseUpgrade } from "./refuse";
import { type Wakeable, WAITING, type Waiting, type WakePlan, WORKS_UNATTACHED } from "./wake";
import {
  definedByHost,
  ENTRY_POINT_METHODS,
  INSTALLED,
  type Installed,
  installedClasses,
  installedOn,
  SOCKET_EVENTS,
  type SocketEventName,
  type SocketOutcome,
} from "./entry-points";
import { ENTRY_POINTS, type EntryPoint, type HostHooks, type LifecycleOptions } from "./options";

/** A failure to start or to handle a request: 500, or for an upgrade a socket closed with 4500. */
const INTERNAL_ERROR = (request: Request) =>
  isUpgrade(request) ? refuseUpgrade(CLOSE_OPEN_FAILED, OPEN_FAILED_REASON) : new Response("Internal error", { status: 500 });
const done: Promise<void> = Promise.resolve();
/** How long destroy() leaves the 1001 close frames to be written before it resets the instance. */
const RESET_AFTER_DESTROY_MS = 100;

/**
 * The answer to a request that reaches an instance `destroy()` is resetting: an upgrade is refused
 * with 1012, which clients follow by reconnecting (they reach the fresh instance), anything else
 * gets 503 with `Retry-After`. Accepted there, a connection would be cut by the reset, and what it
 * sent first lost with the instance.
 */
const DESTROYING = (request: Request) =>
  isUpgrade(request)
    ? refuseUpgrade(CLOSE_RESTARTING, RESTARTING_REASON)
    : new Response(RESTARTING_REASON, { status: 503, headers: { "Retry-After": "1" } });

/** The table of an object that waits to be wired: empty, never claimed into (`#wire` replaces it first). */
const UNWIRED = new DispatchTable();


/**
 * Attaches a Durable Object's entry points and runs the capabilities used on it
 * through one dispatch table.
 */
export class Lifecycle<Host extends object = object> {
  /** The object this lifecycle serves. */
  readonly host: Host;
  /** The object's state (storage, WebSocket API). */
  readonly ctx: DurableObjectState;
  /** The class name in kebab case, as sent in identity frames. */
  readonly className: string;
  #table: DispatchTable;
  /** The capabilities used, in order (a few: an array costs less to build on every wake than a Set). */
  readonly #used: Capability[] = [];
  /** Set while the capabilities used wait to be attached (see `use()`). */
  #plan: WakePlan | undefined;
  /** The handle those capabilities hold meanwhile (lifecycle/wake.ts). */
  #waiting: Waiting | undefined;
  /** The capabilities the host used itself, kept by the first object of a class to make its plan. */
  #top: Capability[] | undefined;
  /** How deep `use()` is inside `attach` calls. */
  #depth = 0;
  #starting: Promise<void> | undefined;
  #started = false;
  /** Set when `destroy()` begins: the instance is going away, and takes no more requests. */
  #destroying = false;
  #locked = false;

  /**
   * Attaches `fetch`, `alarm` and the hibernation WebSocket entry points to `host`.
   * Call it from a field initializer: `readonly lifecycle = Lifecycle.install(this)`.
   * @param host - an instance of a class that extends `DurableObject`
   * @param options - entry points the host delegates from, the identity class name
   * @returns the lifecycle, ready for `.use(...)`
   */
  static install<Host extends object>(host: Host, options: LifecycleOptions = {}): Lifecycle<Host> {
    return new Lifecycle(host, options);
  }

  private constructor(host: Host, options: LifecycleOptions) {
    // SAFETY: `ctx` is the platform's protected field on every DurableObject instance.
    const ctx = (host as { ctx?: DurableObjectState }).ctx;
    const delegates = `${options.delegates}`;
    const installed = installedClasses.get(host.constructor);
    const known = ctx && installed?.delegates === delegates;
    // `in` checks for the member without calling its getter.
    if (!known && (!(host instanceof DurableObject) || !ctx || !("storage" in ctx))) {
      throw new DokitError<LifecycleErrorCode>(
        "NOT_A_DURABLE_OBJECT",
        "Lifecycle.install(this) needs an instance of a class that extends DurableObject from cloudflare:workers",
      );
    }
    const className = (known && installed?.className) || kebab(host.constructor.name);
    this.host = host;
    // SAFETY: checked above, or by this class's first instance.
    this.ctx = ctx as DurableObjectState;
    this.className = options.className ?? className;
    const plan = known ? installed?.plan : undefined;
    this.#plan = plan ?? undefined;
    this.#table = plan ? UNWIRED : new DispatchTable();
    if ((host as Installed)[INSTALLED]) throw new DokitError<LifecycleErrorCode>("HANDLER_CONFLICT", "Lifecycle.install(this) was called twice on one object");
    (host as Installed)[INSTALLED] = this;
    if (known) {
      if (plan === undefined) this.#top = [];
      return;
    }
    this.#installEntryPoints(options.delegates ?? []);
    installedClasses.set(host.constructor, { className, delegates, plan: undefined });
    this.#top = [];
  }

  #installEntryPoints(delegates: readonly EntryPoint[]): void {
    const host = this.host as Installed & Record<string, unknown>;
    for (const name of ENTRY_POINTS) {
      const method = ENTRY_POINT_METHODS[name];
      if (host[name] === method) continue; // installed on this class (or a parent) by an earlier instance
      if (definedByHost(host, name)) {
        if (!delegates.includes(name)) {
          throw new DokitError<LifecycleErrorCode>(
            "HANDLER_CONFLICT",
            `${host.constructor.name} defines its own ${name}(): make it return ` +
              `(await this.lifecycle.${name}(...)) ?? yours, and pass { delegates: ["${name}"] } to Lifecycle.install`,
          );
        }
        continue;
      }
      Object.defineProperty(Object.getPrototypeOf(host), name, { value: method, configurable: true, writable: true });
    }
  }

  /** The object's name: the name it was addressed by, or its id string when it has none. */
  get name(): string {
    return this.ctx.id.name ?? this.ctx.id.toString();
  }

  /**
   * Adds a capability. Chainable; the same capability twice is a no-op.
   * @param capability - the capability to install
   * @returns this lifecycle
   */
  use(capability: Capability): this {
    const used = this.#used;
    if (used.includes(capability)) return this;
    if (this.#locked && !this.#depth) {
      throw new DokitError<LifecycleErrorCode>(
        "LOCKED",
        `cannot use ${capability.capabilityName} after the object started: call use() in a field initializer or the constructor`,
      );
    }
    // The class's first object used a capability of this class here, and all of its capabilities
    // work unattached: wait, and attach when an event needs the table (#wire). A wake that needs
    // no claim (a message no capability claims) then attaches nothing.
    if (this.#plan?.types[used.length] === capability.constructor) {
      used.push(capability);
      (capability as Wakeable)[WAITING] = this.#waiting ??= { lifecycle: this, wire: () => this.#wire(), frames: this.#plan.frames };
      return this;
    }
    this.#wire(); // not in the first object's order: wired at once from here, as that object was
    if (!this.#depth) this.#top?.push(capability);
    used.push(capability);
    this.#attach(capability);
    return this;
  }

  #attach(capability: Capability): void {
    this.#depth++;
    try {
      capability.attach(this.#table.claimsFor(this, capability.capabilityName));
    } finally {
      this.#depth--;
    }
  }

  /**
   * Attaches the capabilities that wait, in the order used, into a table of their own. Once it
   * succeeds; a claim that throws (options that differ from the class's first object's) leaves the
   * object waiting, so every later event meets the same error instead of a half-filled table.
   */
  #wire(): void {
    const plan = this.#plan;
    if (!plan) return;
    this.#plan = undefined;
    this.#table = new DispatchTable();
    try {
      for (const capability of this.#used.slice()) this.#attach(capability);
    } catch (error) {
      this.#plan = plan;
      this.#table = UNWIRED;
      throw error;
    }
  }

  /**
   * Decides, when a class's first object starts, whether later objects of the class may wait to be
   * wired: when every capability it used is marked so (lifecycle/wake.ts), none claimed a start
   * hook or an observer, each frame type claimed said it needs the object wired
   * (those types are the plan's `frames`), and the one that took the sockets (if any) was used by the host itself.
   */
  #planWakes(): void {
    const top = this.#top ?? [];
    this.#top = undefined;
    const installed = installedClasses.get(this.host.constructor);
    const table = this.#table;
    const owner = table.slots.sockets?.value;
    const socketsAt = top.findIndex((capability) => (capability as Wakeable)[WORKS_UNATTACHED] === owner);
    if (installed && installed.plan === undefined) {
      installed.plan =
        Object.values(table.frames).every((claim) => claim.value.needsWiring) &&
        this.#used.every((capability) => (capability as Wakeable)[WORKS_UNATTACHED]) &&
        !table.starts[0] &&
        !table.observer &&
        (!owner || socketsAt >= 0)
          ? { types: top.map((capability) => capability.constructor), socketsAt, frames: Object.keys(table.frames) }
          : null;
    }
  }

  /**
   * Runs the capabilities' start hooks, then the host's `onStart`, once. Concurrent
   * callers share one attempt; a failed start is not remembered, so the next call retries.
   * A host's own DO RPC methods call `await this.lifecycle.start()` first.
   * @param props - props the Worker routed with (passed to start hooks and `onStart`)
   */
  start(props?: Record<string, unknown>): Promise<void> {
    if (this.#started) return done;
    this.#locked = true;
    if (this.#top) this.#planWakes();
    // Nothing to run (no start hook, no onStart, as on most wakes of a socket-only object):
    // started at once, without holding the object for an empty blockConcurrencyWhile turn.
    if (this.#table.starts[0] || (this.host as HostHooks).onStart) return (this.#starting ??= this.#runStart(props));
    this.#started = true;
    this.#table.observer?.emit("lifecycle", this, "start", { began: 0 });
    return done;
  }

  async #runStart(props: Record<string, unknown> | undefined): Promise<void> {
    const host = this.host as HostHooks;
    const observer = this.#table.observer;
    const began = observer?.since("lifecycle");
    // A throw inside blockConcurrencyWhile resets the object; catch it there and
    // rethrow outside, so a failed start is simply retried by the next caller.
    const failure = await this.ctx.blockConcurrencyWhile(async () => {
      try {
        await runInContext({ agent: this.host, props }, async () => {
          for (const hook of this.#table.starts) await hook(props);
          await host.onStart?.(props);
        });
        return undefined;
      } catch (error) {
        return { error };
      }
    });
    if (failure) {
      this.#starting = undefined;
      const error = new DokitError<LifecycleErrorCode>("START_FAILED", `${this.className} failed to start: ${errorMessage(failure.error)}`, {
        cause: failure.error,
      });
      observer?.error(this, "start", error);
      throw error;
    }
    this.#started = true;
    observer?.emit("lifecycle", this, "start", { began });
  }

  /**
   * Handles an HTTP request or upgrade through the dispatch table.
   * @returns the response, or `undefined` when nothing claimed the request
   *   (a host that delegates answers it itself; the installed entry point answers 404)
   */
  async fetch(request: Request): Promise<Response | undefined> {
    if (this.#destroying) return DESTROYING(request);
    const props = readProps(request);
    try {
      this.#wire();
      await this.start(props);
      if (this.#destroying) return DESTROYING(request);
      return await runInContext({ agent: this.host, request, props }, () => this.#dispatch(request));
    } catch (error) {
      console.error(`dokit: ${this.className}/${this.name} failed to handle ${request.method} ${request.url}`, error);
      this.#table.observer?.error(this, "fetch", error);
      return INTERNAL_ERROR(request);
    }
  }

  async #dispatch(request: Request): Promise<Response | undefined> {
    const table = this.#table;
    if (isUpgrade(request)) {
      for (const { value: offer } of table.upgrades) {
        const response = await offer(request);
        if (response) return response;
      }
      return table.slots.catchAll?.value(request);
    }
    const path = subPath(request);
    // A route that passes (`undefined`) leaves the request unclaimed: the host's onRequest, else nothing.
    return (await table.findRoute(path)?.(request, path)) ?? (this.host as HostHooks).onRequest?.(request);
  }

  /**
   * Runs due capability alarm work (see `claimAlarm`), then the host's `onAlarm`
   * when its own alarm is due. With no alarm work claimed, the alarm is the host's.
   */
  async alarm(info?: AlarmInvocationInfo): Promise<void> {
    this.#wire();
    await this.start();
    const runHost = async () => {
      await (this.host as HostHooks).onAlarm?.(info);
    };
    const runner = this.#table.slots.alarm?.value;
    const observer = this.#table.observer;
    const began = observer?.since("lifecycle");
    // A throwing alarm reaches the platform, which logs it and retries the alarm (`retryCount`).
    await runInContext({ agent: this.host }, () => (runner ? runner(Date.now(), runHost) : runHost()));
    observer?.emit("lifecycle", this, "alarm", { began, ...info });
  }

  /** @returns `true` when a capability handled the message, `undefined` when the socket is the host's own */
  async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<true | undefined> {
    return this.#socketEvent("message", ws, message);
  }

  /** @returns `true` when a capability handled the close, `undefined` when the socket is the host's own */
  async webSocketClose(ws: WebSocket, code: number, reason: string, wasClean: boolean): Promise<true | undefined> {
    return this.#socketEvent("close", ws, code, reason, wasClean);
  }

  /** @returns `true` when a capability handled the error, `undefined` when the socket is the host's own */
  async webSocketError(ws: WebSocket, error: unknown): Promise<true | undefined> {
    return this.#socketEvent("error", ws, error);
  }

  static {
    for (const name of ["webSocketMessage", "webSocketClose", "webSocketError"] as const) {
      const event = SOCKET_EVENTS[name];
      ENTRY_POINT_METHODS[name] = function (this: Installed, ws: WebSocket, a: unknown, b: unknown, c: unknown): SocketOutcome {
        return (this[INSTALLED] ?? installedOn(this)).#socketEvent(event, ws, a, b, c);
      };
    }
  }

  /**
   * Hands a socket event to the owner (no closure per message). The owner runs the handlers in the
   * connection's context (lifecycle/context.ts inConnectionContext). An event handled synchronously
   * (most messages) is answered without a promise, so the runtime has none to wait on.
   */
  #socketEvent(event: SocketEventName, ws: WebSocket, a?: unknown, b?: unknown, c?: unknown): SocketOutcome {
    let owner: SocketOwner | undefined;
    try {
      // Not wired yet: the capability that will take the sockets hands over its socket owner.
      let plan = this.#plan;
      if (plan && plan.types.length !== this.#used.length) {
        this.#wire(); // the host used fewer capabilities than the class's first object
        plan = undefined;
      }
      owner = plan ? ((this.#used[plan.socketsAt] as Wakeable | undefined)?.[WORKS_UNATTACHED] as SocketOwner | undefined) : this.#table.slots.sockets?.value;
      if (!owner) return undefined;
      // An object that waits to be wired has no start hook and no observer (its plan says so): started at once.
      if (!this.#started && this.#plan && !(this.host as HostHooks).onStart) this.#started = this.#locked = true;
      else if (!this.#started) {
        const starting = this.start();
        // Not started at once: a start hook or onStart runs first (inside blockConcurrencyWhile).
        if (!this.#started) return starting.then(() => this.#socketEvent(event, ws, a, b, c), (error: unknown) => this.#socketFailed(event, ws, error));
      }
      // SAFETY: the entry point of `event` passed that event's arguments, in order.
      const handled = (owner[event] as (ws: WebSocket, a: unknown, b: unknown, c: unknown) => boolean | Promise<unknown>)(ws, a, b, c);
      if (typeof handled === "boolean") return handled || undefined;
      // A close or error settles to `false` for a socket that is not the owner's.
      return handled.then(
        (settled) => (settled === false ? undefined : true),
        (error: unknown) => this.#socketFailed(event, ws, error),
      );
    } catch (error) {
      return this.#socketFailed(event, ws, error);
    }
  }

  /** Logs a socket event that failed (the owner's handlers already told the client what they meant to). @returns `true` */
  #socketFailed(event: SocketEventName, ws: WebSocket, error: unknown): true {
    console.error(`dokit: ${this.className}/${this.name} failed to handle a WebSocket ${event}`, error);
    // SAFETY: a dokit socket carries its connection id (undefined on the host's own sockets).
    this.#table.observer?.error(this, event, error, (ws as { id?: string }).id);
    return true;
  }

  /**
   * Runs every capability's destroy hook (WebSockets closes its connections with 1001),
   * deletes the object's alarm and all of its storage, then resets the instance
   * (`ctx.abort`) shortly after returning: the next request meets a fresh object. A request that
   * arrives meanwhile is refused (an upgrade with 1012, which clients retry; others with 503).
   */
  async destroy(): Promise<void> {
    this.#destroying = true;
    this.#wire();
    await this.start();
    const observer = this.#table.observer;
    observer?.emit("lifecycle", this, "destroy", {});
    for (const hook of this.#table.destroys) {
      try {
        await hook();
      } catch (error) {
        console.error(`dokit: a destroy hook of ${this.className} failed`, error);
        observer?.error(this, "destroy", error);
      }
    }
    await this.ctx.storage.deleteAll();
    await this.ctx.storage.deleteAlarm();
    // workerd shuts a real client's connection after a server-initiated close only
    // when the close was issued inside a WebSocket event, or when the instance goes
    // away. destroy() runs outside socket events (an RPC, a request, an alarm), so
    // the clients would hang in CLOSING: reset once the close frames are written.
    setTimeout(() => this.ctx.abort("dokit: Durable Object destroyed"), RESET_AFTER_DESTROY_MS);
  }
}

/** @returns whether the host's class (below DurableObject) defines `name` */
