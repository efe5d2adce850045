// The rooms bench's objects: shards (one class per batch window) and the sequencer, both counting
// the object-to-object calls they receive or make in module-level counters that the Worker's
// /stats route reads (in local workerd the Worker and its objects share one isolate), and failing a
// share of them when the driver sets a fault rate (/faults). Each has `benchAbort()`, a reset as a
// crash would do it (the instance is gone, storage stays).
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "dokit/lifecycle";
import { RoomRelay, RoomSequencer, RoomShard } from "dokit/rooms";
import { WebSockets } from "dokit/websockets";

// The argument and result types of the sequencer's and relay's methods, read off the public classes
// (the room's wire records are not exported on their own).
type ShardReport = Parameters<RoomSequencer["report"]>[0];
type OutgoingMessage = Parameters<RoomSequencer["publish"]>[1][number];
type Published = Awaited<ReturnType<RoomSequencer["publish"]>>;
type LogRange = Awaited<ReturnType<RoomSequencer["since"]>>;
type Joined = Awaited<ReturnType<RoomSequencer["join"]>>;
type DeliveryTarget = Parameters<RoomRelay["relay"]>[1][number];
type Spread = Parameters<RoomRelay["relay"]>[2];
type Outcome = Awaited<ReturnType<RoomRelay["relay"]>>[number];

/** Object-to-object calls since the last reset of the counters, by kind, and the faults injected. */
const calls = {
  publish: 0,
  join: 0,
  leave: 0,
  report: 0,
  since: 0,
  /** Deliveries to shards, by the sequencer and by relays. */
  deliver: 0,
  /** Calls to relays, by the sequencer and by relays. */
  relay: 0,
  /** The sequencer's own outgoing calls: its deliveries to shards and its calls to relays. */
  fromSequencer: 0,
  faults: 0,
  messages: 0,
};
/** The share of calls failed (0 to 1), set by the driver. */
let faultRate = 0;

export function stats(): typeof calls {
  return { ...calls };
}

export function resetStats(): void {
  for (const key of Object.keys(calls) as (keyof typeof calls)[]) calls[key] = 0;
}

export function setFaultRate(rate: number): void {
  faultRate = rate;
}

/** Fails this call with probability `faultRate` (counted). */
function maybeFail(what: string): void {
  if (faultRate > 0 && Math.random() < faultRate) {
    calls.faults++;
    throw new Error(`bench: injected fault (${what})`);
  }
}

/** The room sequencer, counting and failing calls: half the faults before the work (a lost request), half after (a lost answer). */
export class BenchSequencer extends RoomSequencer {
  constructor(ctx: DurableObjectState, env: object, fanout?: number) {
    super(ctx, env, {
      retryMs: 100,
      ...(fanout !== undefined && { fanout }),
      deliveryHook: (_shard, phase) => {
        if (phase === "request") (calls.deliver++, calls.fromSequencer++);
        maybeFail(`deliver ${phase}`);
      },
    });
  }

  override async publish(shard: ShardReport | null, messages: OutgoingMessage[]): Promise<Published> {
    calls.publish++;
    calls.messages += messages.length;
    maybeFail("publish request");
    const published = await super.publish(shard, messages);
    maybeFail("publish answer");
    return published;
  }

  override async since(after: number, limit?: number): Promise<LogRange> {
    calls.since++;
    maybeFail("since");
    return super.since(after, limit);
  }

  override async join(shard: ShardReport, delivered: number | null, epoch?: string): Promise<Joined> {
    calls.join++;
    return super.join(shard, delivered, epoch);
  }

  override async leave(name: string): Promise<void> {
    calls.leave++;
    return super.leave(name);
  }

  override async report(shard: ShardReport): ReturnType<RoomSequencer["report"]> {
    calls.report++;
    return super.report(shard);
  }

  benchAbort(): void {
    this.ctx.abort("bench: reset");
  }
}

/** The sequencer of the tree rooms: 4 wide, so rooms of more than 4 shards deliver through relays. */
export class BenchTreeSequencer extends BenchSequencer {
  constructor(ctx: DurableObjectState, env: object) {
    super(ctx, env, 4);
  }
}

/** The room relay, counting the calls it gets and makes, and failing a share of them. */
export class BenchRelay extends RoomRelay {
  constructor(ctx: DurableObjectState, env: object) {
    super(ctx, env, {
      deliveryHook: (_shard, phase) => {
        if (phase === "request") calls.deliver++;
        maybeFail(`relay deliver ${phase}`);
      },
    });
  }

  override async relay(body: string, targets: DeliveryTarget[], how: Spread): Promise<Outcome[]> {
    calls.relay++;
    if (!how.path.includes(".")) calls.fromSequencer++;
    maybeFail("relay");
    return super.relay(body, targets, how);
  }

  benchAbort(): void {
    this.ctx.abort("bench: reset");
  }
}

/** A bench shard: the room's clients connect here; `batchMs` differs by class. */
abstract class BenchShard extends DurableObject<Record<string, unknown>> {
  abstract readonly binding: string;
  abstract readonly batchMs: number;
  readonly sequencer: string = "ROOM_SEQUENCER";
  readonly webSockets = new WebSockets();
  room: RoomShard | undefined;
  lifecycle: Lifecycle | undefined;

  /** Installs the shard (in the subclass's constructor, once its binding and batch window are set). */
  protected install(): void {
    this.room = new RoomShard({ webSockets: this.webSockets, env: this.env, shards: this.binding, batchMs: this.batchMs, sequencer: this.sequencer });
    this.lifecycle = Lifecycle.install(this).use(this.room);
  }

  benchAbort(): void {
    this.ctx.abort("bench: reset");
  }
}

export class BenchShardB0 extends BenchShard {
  readonly binding = "ROOMS_B0";
  readonly batchMs = 0;
  constructor(ctx: DurableObjectState, env: Record<string, unknown>) {
    super(ctx, env);
    this.install();
  }
}

export class BenchShardB10 extends BenchShard {
  readonly binding = "ROOMS_B10";
  readonly batchMs = 10;
  constructor(ctx: DurableObjectState, env: Record<string, unknown>) {
    super(ctx, env);
    this.install();
  }
}

export class BenchShardB50 extends BenchShard {
  readonly binding = "ROOMS_B50";
  readonly batchMs = 50;
  constructor(ctx: DurableObjectState, env: Record<string, unknown>) {
    super(ctx, env);
    this.install();
  }
}

/** A shard of the tree rooms (batch window 10 ms, the 4-wide sequencer). */
export class BenchShardT4 extends BenchShard {
  readonly binding = "ROOMS_T4";
  readonly batchMs = 10;
  override readonly sequencer = "TREE_SEQUENCER";
  constructor(ctx: DurableObjectState, env: Record<string, unknown>) {
    super(ctx, env);
    this.install();
  }
}
