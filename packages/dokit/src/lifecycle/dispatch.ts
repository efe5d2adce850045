import type {
  AlarmRunner,
  ConnectFrameSource,
  DestroyHook,
  FrameHandler,
  RouteHandler,
  SocketOwner,
  StartHook,
  UpgradeHandler,
} from "./capability";
import { DokitError } from "./errors";

/** A claimed value and the capability that claimed it. */
export type Owned<T> = { owner: string; value: T };
type Slots = { catchAll?: Owned<UpgradeHandler>; sockets?: Owned<SocketOwner>; alarm?: Owned<AlarmRunner> };
/** A frame claim: its handler, and whether it applies only to protocol-enabled connections. */
export type FrameClaim = { handler: FrameHandler; protocolOnly: boolean };

/**
 * Takes `key` in a null-prototype `table` for `owner`, or throws naming both claimants.
 * Keys that would reach inherited members or thenables are refused.
 */
export function claimKey<T>(kind: string, table: Record<string, Owned<T>>, key: string, owner: string, value: T): void {
  // Object.prototype's names include `__proto__` and `constructor`.
  if (key === "then" || key in Object.prototype) {
    throw new DokitError("RESERVED_NAME", `${owner} cannot claim the ${kind} "${key}": that name is reserved`);
  }
  const taken = table[key];
  if (taken) throw new DokitError("DUPLICATE_CLAIM", `the ${kind} "${key}" is claimed by ${taken.owner} and by ${owner}`);
  table[key] = { owner, value };
}

/**
 * The one table every capability claims into. Keyed tables have null
 * prototypes, so a wire name can never resolve to an inherited member.
 */
export class DispatchTable {
  readonly upgrades: Owned<UpgradeHandler>[] = [];
  readonly routes: Record<string, Owned<RouteHandler>> = Object.create(null);
  readonly frames: Record<string, Owned<FrameClaim>> = Object.create(null);
  /** Client-callable method names (the owning capability calls them). */
  readonly methods: Record<string, Owned<true>> = Object.create(null);
  readonly connectFrames: ConnectFrameSource[] = [];
  readonly starts: StartHook[] = [];
  /** What only one capability may hold: the catch-all upgrade, the hibernating sockets, the alarm. */
  readonly slots: Slots = {};
  readonly destroys: DestroyHook[] = [];
  routeCount = 0;

  /** Takes a slot for `owner` (the same value again is a no-op), or throws naming both claimants. */
  claimSlot<K extends keyof Slots>(slot: K, owner: string, value: NonNullable<Slots[K]>["value"]): void {
    const taken = this.slots[slot];
    if (taken && taken.value !== value) {
      throw new DokitError("DUPLICATE_CLAIM", `the ${slot} slot is claimed by ${taken.owner} and by ${owner}; only one may hold it`);
    }
    // SAFETY: K ties the slot to its value type.
    this.slots[slot] ??= { owner, value } as Slots[K];
  }

  /** @returns the route handler for `path` or its nearest claimed parent, with the claimed path */
  findRoute(path: string): RouteHandler | undefined {
    if (this.routeCount === 0) return undefined;
    let candidate = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
    for (;;) {
      const hit = this.routes[candidate];
      if (hit) return hit.value;
      const cut = candidate.lastIndexOf("/");
      if (cut <= 0) return undefined;
      candidate = candidate.slice(0, cut);
    }
  }
}
