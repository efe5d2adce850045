import type {
  AlarmHook,
  ConnectFrameSource,
  DestroyHook,
  FrameHandler,
  RouteHandler,
  SocketOwner,
  StartHook,
  UpgradeHandler,
} from "./capability";
import { DokitError } from "./errors";

type Owned<T> = { owner: string; value: T };
/** A frame claim: its handler, and whether it applies only to protocol-enabled connections. */
export type FrameClaim = { handler: FrameHandler; protocolOnly: boolean };

/** Keys no claim may take: they would reach inherited members or thenables. */
function assertNotReserved(kind: string, key: string, owner: string): void {
  if (key === "then" || key === "__proto__" || key === "constructor" || key in Object.prototype) {
    throw new DokitError("RESERVED_NAME", `${owner} cannot claim the ${kind} "${key}": that name is reserved`);
  }
}

/**
 * The one table every capability claims into. Keyed tables have null
 * prototypes, so a wire name can never resolve to an inherited member.
 */
export class DispatchTable {
  readonly upgrades: Owned<UpgradeHandler>[] = [];
  catchAll: Owned<UpgradeHandler> | undefined;
  readonly routes: Record<string, Owned<RouteHandler>> = Object.create(null);
  readonly frames: Record<string, Owned<FrameClaim>> = Object.create(null);
  readonly methods: Record<string, string> = Object.create(null);
  readonly connectFrames: ConnectFrameSource[] = [];
  socketOwner: Owned<SocketOwner> | undefined;
  readonly starts: StartHook[] = [];
  readonly alarms: Record<string, Owned<AlarmHook>> = Object.create(null);
  readonly destroys: DestroyHook[] = [];
  routeCount = 0;

  /** Takes `key` in `table` for `owner`, or throws naming both claimants. */
  claim<T>(kind: string, table: Record<string, Owned<T>>, key: string, owner: string, value: T): void {
    assertNotReserved(kind, key, owner);
    const taken = table[key];
    if (taken) {
      throw new DokitError("DUPLICATE_CLAIM", `the ${kind} "${key}" is claimed by ${taken.owner} and by ${owner}`);
    }
    table[key] = { owner, value };
  }

  /** Claims a method name (no handler: the owning capability calls it). */
  claimMethod(name: string, owner: string): void {
    assertNotReserved("method", name, owner);
    const taken = this.methods[name];
    if (taken) throw new DokitError("DUPLICATE_CLAIM", `the method "${name}" is claimed by ${taken} and by ${owner}`);
    this.methods[name] = owner;
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
