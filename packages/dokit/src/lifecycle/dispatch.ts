import { normalizeRoute } from "./requests";
import type {
  AlarmRunner,
  CallableSource,
  Capability,
  Claims,
  ConnectFrameSource,
  ConnectionSlot,
  DestroyHook,
  Dispatch,
  FrameClaim,
  FrameContext,
  FrameHandler,
  FrameOptions,
  Observer,
  ProtocolFrame,
  RouteHandler,
  SlotOptions,
  SocketOwner,
  StartHook,
  UpgradeHandler,
} from "./capability";
import type { Connection } from "./connection";
import { DokitError } from "./errors";
import type { LifecycleErrorCode } from "./errors";
import type { Lifecycle } from "./lifecycle";

/** A claimed value and the capability that claimed it. */
export type Owned<T> = { owner: string; value: T };
type Slots = { catchAll?: Owned<UpgradeHandler>; sockets?: Owned<SocketOwner>; alarm?: Owned<AlarmRunner> };

/**
 * Takes `key` in a null-prototype `table` for `owner`, or throws naming both claimants.
 * Keys that would reach inherited members or thenables are refused.
 */
export function claimKey<T>(kind: string, table: Record<string, Owned<T>>, key: string, owner: string, value: T): void {
  // Object.prototype's names include `__proto__` and `constructor`.
  if (key === "then" || key in Object.prototype) {
    throw new DokitError<LifecycleErrorCode>("RESERVED_NAME", `${owner} cannot claim the ${kind} "${key}": that name is reserved`);
  }
  const taken = table[key];
  if (taken) throw new DokitError<LifecycleErrorCode>("DUPLICATE_CLAIM", `the ${kind} "${key}" is claimed by ${taken.owner} and by ${owner}`);
  table[key] = { owner, value };
}

/**
 * The one table every capability claims into. Keyed tables have null
 * prototypes, so a wire name can never resolve to an inherited member.
 */
export class DispatchTable implements Dispatch {
  readonly upgrades: Owned<UpgradeHandler>[] = [];
  readonly routes: Record<string, Owned<RouteHandler>> = Object.create(null);
  readonly frames: Record<string, Owned<FrameClaim>> = Object.create(null);
  /** Client-callable method names, each with the source that serves it. */
  readonly methods: Record<string, Owned<CallableSource>> = Object.create(null);
  readonly connectFrameSources: ConnectFrameSource[] = [];
  readonly starts: StartHook[] = [];
  /** What only one capability may hold: the catch-all upgrade, the hibernating sockets, the alarm. */
  readonly slots: Slots = { catchAll: undefined, sockets: undefined, alarm: undefined };
  readonly destroys: DestroyHook[] = [];
  routeCount = 0;
  /** The event publisher dokit/observability installs (`undefined`: no events, nothing is timed). */
  observer: Observer | undefined;

  /** Takes a slot for `owner` (the same value again is a no-op), or throws naming both claimants. */
  claimSlot<K extends keyof Slots>(slot: K, owner: string, value: NonNullable<Slots[K]>["value"]): void {
    const taken = this.slots[slot];
    if (taken && taken.value !== value) {
      const message = taken.owner === owner ? `one object can install one ${owner}` : `the ${slot} slot is claimed by ${taken.owner} and by ${owner}; only one may hold it`;
      throw new DokitError<LifecycleErrorCode>("DUPLICATE_CLAIM", message);
    }
    // SAFETY: K ties the slot to its value type.
    this.slots[slot] ??= { owner, value } as Slots[K];
  }

  /** @returns the source serving a claimed method */
  method(name: string): CallableSource | undefined {
    return this.methods[name]?.value;
  }

  /** @returns the names of every claimed method */
  methodNames(): string[] {
    return Object.keys(this.methods);
  }

  /** Sends a protocol frame to the socket owner's protocol-enabled connections */
  broadcastProtocol(frame: ProtocolFrame): void {
    this.slots.sockets?.value.protocol(frame);
  }

  /** @returns what the socket owner knows of a connection */
  connectionContext(connection: Connection): FrameContext | undefined {
    return this.slots.sockets?.value.context(connection);
  }

  /** Claims a per-connection slot from the socket owner */
  connectionSlot<T>(name: string, options?: SlotOptions<T>): ConnectionSlot<T> {
    const owner = this.slots.sockets?.value;
    if (!owner) throw new DokitError<LifecycleErrorCode>("NOT_INSTALLED", "connection slots need WebSockets");
    return owner.slot(name, options);
  }

  /** @returns the claim for a frame type */
  frame(type: string): FrameClaim | undefined {
    return this.frames[type]?.value;
  }

  /** @returns the route handler for `path` or its nearest claimed parent */
  findRoute(path: string): RouteHandler | undefined {
    if (this.routeCount === 0) return undefined;
    let candidate = normalizeRoute(path);
    for (;;) {
      const hit = this.routes[candidate];
      if (hit) return hit.value;
      const cut = candidate.lastIndexOf("/");
      if (cut <= 0) return undefined;
      candidate = candidate.slice(0, cut);
    }
  }

  /**
   * The claims one capability declares into this table.
   * @param lifecycle - the lifecycle being built
   * @param owner - the capability's name, as errors show it
   */
  claimsFor(lifecycle: Lifecycle, owner: string): Claims {
    return new CapabilityClaims(this, lifecycle, owner);
  }
}

/**
 * One capability's claims into the table. Methods on a class, not closures: an object
 * builds these on every construction (every wake), and bundlers that keep function
 * names (wrangler does) wrap each closure in a defineProperty call.
 */
class CapabilityClaims implements Claims {
  readonly dispatch: DispatchTable;
  readonly lifecycle: Lifecycle;
  readonly owner: string;

  constructor(table: DispatchTable, lifecycle: Lifecycle, owner: string) {
    this.dispatch = table;
    this.lifecycle = lifecycle;
    this.owner = owner;
  }

  use(capability: Capability): void {
    this.lifecycle.use(capability);
  }

  upgrade(handler: UpgradeHandler): void {
    this.dispatch.upgrades.push({ owner: this.owner, value: handler });
  }
  catchAllUpgrade(handler: UpgradeHandler): void {
    this.dispatch.claimSlot("catchAll", this.owner, handler);
  }
  route(path: string, handler: RouteHandler): void {
    if (!path.startsWith("/")) throw new DokitError<LifecycleErrorCode>("INVALID_ARGUMENT", `${this.owner}: route "${path}" must start with "/"`);
    claimKey("route", this.dispatch.routes, normalizeRoute(path), this.owner, handler);
    this.dispatch.routeCount++;
  }
  frame(type: string, handler: FrameHandler, options?: FrameOptions): void {
    const owner = this.owner;
    // The options as given (`protocolOnly`, `ownContext`, `needsWiring`: absent is false).
    claimKey("frame type", this.dispatch.frames, type, owner, { ...options, handler, owner });
  }
  method(name: string, source: CallableSource): void {
    claimKey("method", this.dispatch.methods, name, this.owner, source);
  }
  connectFrames(source: ConnectFrameSource): void {
    this.dispatch.connectFrameSources.push(source);
  }
  takeSockets(socketOwner: SocketOwner): void {
    this.dispatch.claimSlot("sockets", this.owner, socketOwner);
  }
  onStart(hook: StartHook): void {
    this.dispatch.starts.push(hook);
  }
  takeAlarm(runner: AlarmRunner): void {
    this.dispatch.claimSlot("alarm", this.owner, runner);
  }
  onDestroy(hook: DestroyHook): void {
    this.dispatch.destroys.push(hook);
  }
  observe(observer: Observer): void {
    this.dispatch.observer = observer;
  }
}
