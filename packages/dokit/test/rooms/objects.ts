import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";
import { RoomSequencer, RoomShard } from "../../src/rooms";
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
