import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";
import { Presence } from "../../src/presence";
import { RoomSequencer, RoomShard } from "../../src/rooms";
import { presenceBytes } from "../../src/rooms/sizes";
import type { PresenceAnswer, PresenceKnown, PresenceUpdate, ShardReport } from "../../src/rooms/types";
import { WebSockets } from "../../src/websockets";

/**
 * A shard whose WebSockets has a Presence: room-wide presence. Plain text `remote` answers
 * `remote:<n>`, the other shards' entries it holds.
 */
export class RoomPresenceChat extends DurableObject<Env> {
  readonly presence = new Presence<{ name: string }>({ tickMs: 20 });
  readonly webSockets: WebSockets = new WebSockets({
    presence: this.presence,
    handlers: { onMessage: (connection, message) => void (String(message) === "count" && connection.send(`count:${this.room.count()}`)) },
  });
  readonly room = new RoomShard({ webSockets: this.webSockets, env: this.env, shards: "ROOM_PRESENCE_CHAT", sequencer: "PRESENCE_SEQUENCER", countMs: 50 });
  readonly lifecycle = Lifecycle.install(this).use(this.room);
}

/** The sequencer of the presence rooms: fast counts, and room-wide presence capped at 5 entries. */
export class PresenceSequencer extends RoomSequencer {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, { retryMs: 100, countMs: 50, presenceEntries: 5 });
  }
}

/** A shard with room-wide presence whose sequencer delivers through relays, 2 wide (TreeSequencer). */
export class RoomPresenceTree extends DurableObject<Env> {
  readonly presence = new Presence<{ name: string }>({ tickMs: 20 });
  readonly webSockets: WebSockets = new WebSockets({ presence: this.presence });
  readonly room = new RoomShard({ webSockets: this.webSockets, env: this.env, shards: "ROOM_PRESENCE_TREE", sequencer: "TREE_SEQUENCER", countMs: 50 });
  readonly lifecycle = Lifecycle.install(this).use(this.room);
}

/** One update as {@link PartsSequencer} received it. */
export type ReceivedUpdate = { shard: string; gen: string; n: number; full: boolean; more: boolean; ids: string[]; bytes: number };

/** A shard with room-wide presence whose calls to the sequencer carry at most 4 KiB of entries each (its sequencer: PartsSequencer). */
export class RoomPresenceParts extends DurableObject<Env> {
  readonly presence = new Presence<{ name: string }>({ tickMs: 20 });
  readonly webSockets: WebSockets = new WebSockets({ presence: this.presence });
  readonly room = new RoomShard({ webSockets: this.webSockets, env: this.env, shards: "ROOM_PRESENCE_PARTS", sequencer: "PARTS_SEQUENCER", countMs: 50, presencePartBytes: 4096 });
  readonly lifecycle = Lifecycle.install(this).use(this.room);
}

/** The sequencer of RoomPresenceParts: keeps every presence update it receives, with its estimated bytes, in `received`. */
export class PartsSequencer extends RoomSequencer {
  readonly received: ReceivedUpdate[] = [];

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, { retryMs: 100, countMs: 50 });
  }

  override presence(shard: ShardReport, update: PresenceUpdate | null, known: PresenceKnown | null): Promise<PresenceAnswer> {
    if (update) {
      let bytes = 0;
      for (const id of update.left) bytes += presenceBytes(id);
      for (const [id, json] of update.set) bytes += presenceBytes(id, json);
      this.received.push({ shard: shard.name, gen: update.gen, n: update.n, full: update.full, more: update.more === true, ids: [...update.left, ...update.set.map(([id]) => id)], bytes });
    }
    return super.presence(shard, update, known);
  }
}
