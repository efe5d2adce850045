import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";
import { RoomRelay, RoomSequencer, RoomShard } from "../../src/rooms";
import { WebSockets } from "../../src/websockets";

/**
 * A chat shard: clients join with `?tag=<t>` tags (`muted` ones may not publish). Plain text messages ask the shard: `count` (the
 * room-wide count), `server:<json>` (publishes from server code; answers `published:<seq>`),
 * `except-me:<json>` (publishes leaving the sender out), `tag:<tag>:<json>` (publishes to a tag).
 */
export class RoomChat extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets({
    getConnectionTags: (_connection, ctx) => new URL(ctx.request.url).searchParams.getAll("tag"),
    handlers: {
      onMessage: async (connection, message) => {
        const text = String(message);
        if (text === "count") return connection.send(`count:${this.room.count()}`);
        if (text.startsWith("server:")) return connection.send(`published:${await this.room.publish(JSON.parse(text.slice(7)))}`);
        if (text.startsWith("except-me:")) return void (await this.room.publish(JSON.parse(text.slice(10)), { except: connection.id }));
        if (text.startsWith("tag:")) {
          const [, tag = "", ...rest] = text.split(":");
          return void (await this.room.publish(JSON.parse(rest.join(":")), { tag }));
        }
      },
    },
  });
  readonly room = new RoomShard({
    webSockets: this.webSockets,
    env: this.env,
    shards: "ROOM_CHAT",
    countMs: 50,
    canPublish: (connection) => !connection.tags.includes("muted"),
  });
  readonly lifecycle = Lifecycle.install(this).use(this.room);
}

/** The room sequencer with fast retries (a failed delivery is retried after 100 ms). */
export class TestSequencer extends RoomSequencer {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, { retryMs: 100, countMs: 50 });
  }
}

/** A sequencer whose log keeps only the newest 5 messages. */
export class SmallLogSequencer extends RoomSequencer {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, { retryMs: 100, logMessages: 5 });
  }
}

/** A shard of rooms ordered by the small-log sequencer. */
export class RoomChatSmallLog extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets();
  readonly room = new RoomShard({ webSockets: this.webSockets, env: this.env, shards: "ROOM_CHAT_SMALL", sequencer: "SMALL_SEQUENCER", countMs: 50 });
  readonly lifecycle = Lifecycle.install(this).use(this.room);
}

/** A chat shard that gathers publishes for a whole second (a batch is surely waiting when the test resets it), and stores them. */
export class RoomChatSlowBatch extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets();
  readonly room = new RoomShard({ webSockets: this.webSockets, env: this.env, shards: "ROOM_CHAT_SLOW", batchMs: 1000, storeWaiting: true });
  readonly lifecycle = Lifecycle.install(this).use(this.room);
}

/** The same, holding waiting publishes in memory only (the default). */
export class RoomChatSlowMemory extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets();
  readonly room = new RoomShard({ webSockets: this.webSockets, env: this.env, shards: "ROOM_CHAT_SLOW_MEMORY", batchMs: 1000 });
  readonly lifecycle = Lifecycle.install(this).use(this.room);
}

/** Calls FaultySequencer failed on purpose, in this isolate. */
let injected = 0;
/** The share of calls FaultySequencer fails. */
const FAULT_RATE = 0.2;

/** Fails the call it is in with probability FAULT_RATE (counted). */
function fault(what: string): void {
  if (Math.random() < FAULT_RATE) {
    injected++;
    throw new Error(`test: injected fault (${what})`);
  }
}

/**
 * A sequencer that fails a fifth of the calls between the room's objects: deliveries to shards
 * (before the request: the shard never got it; after the answer: its confirmation was lost), and
 * the shards' publish calls (before and after the batch is ordered) and log pulls.
 */
export class FaultySequencer extends RoomSequencer {
  /** Set by `refusePublishes`: every publish fails, and no call fails at random (this instance only). */
  #refusing: boolean | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, { retryMs: 50, countMs: 50, deliveryHook: (_shard, phase) => this.#fault(`deliver ${phase}`) });
  }

  override async publish(shard: Parameters<RoomSequencer["publish"]>[0], messages: Parameters<RoomSequencer["publish"]>[1]) {
    if (this.#refusing) {
      injected++;
      throw new Error("test: injected fault (publish refused)");
    }
    this.#fault("publish request");
    const published = await super.publish(shard, messages);
    this.#fault("publish answer");
    return published;
  }

  override async since(after: number, limit?: number) {
    this.#fault("since");
    return super.since(after, limit);
  }

  /** From now on, every publish fails (`true`), or none does (`false`); either way no call fails at random any more. */
  refusePublishes(on: boolean): void {
    this.#refusing = on;
  }

  #fault(what: string): void {
    if (this.#refusing === undefined) fault(what);
  }

  /** @returns the calls failed on purpose so far */
  faultsInjected(): number {
    return injected;
  }
}

/** A shard of rooms ordered by the faulty sequencer. */
export class RoomChatFaulty extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets();
  readonly room = new RoomShard({ webSockets: this.webSockets, env: this.env, shards: "ROOM_CHAT_FAULTY", sequencer: "FAULTY_SEQUENCER", countMs: 50 });
  readonly lifecycle = Lifecycle.install(this).use(this.room);
}

/** Deliveries TestRelay made, in this isolate. */
let relayed = 0;

/** A sequencer whose fan-out is 2 wide: a room of more than 2 shards delivers through TestRelay. */
export class TreeSequencer extends RoomSequencer {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, { retryMs: 50, countMs: 50, fanout: 2, relays: "TEST_RELAY" });
  }
}

/** Whether every relay fails its deliveries (a relay outage), in this isolate. */
let relayOutage = false;

/** The room relay, counting its deliveries to shards; `outage(true)` makes every relay fail its deliveries until `outage(false)`. */
export class TestRelay extends RoomRelay {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, {
      deliveryHook: (_shard, phase) => {
        if (phase !== "request") return;
        if (relayOutage) throw new Error("test: relay outage");
        relayed++;
      },
    });
  }

  /** Starts (`true`) or ends a relay outage. */
  outage(on: boolean): void {
    relayOutage = on;
  }

  /** @returns the deliveries relays made so far */
  relayed(): number {
    return relayed;
  }
}

/** A shard of rooms ordered by the tree sequencer. */
export class RoomChatTree extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets();
  readonly room = new RoomShard({ webSockets: this.webSockets, env: this.env, shards: "ROOM_CHAT_TREE", sequencer: "TREE_SEQUENCER", countMs: 50 });
  readonly lifecycle = Lifecycle.install(this).use(this.room);
}
