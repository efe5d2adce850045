// What travels between a room's objects (shards, the sequencer, the Worker). Message bodies stay
// JSON text end to end: parsed once where they enter (a client's frame), never again.

/** A message on its way to the sequencer. */
export interface OutgoingMessage {
  /** The publishing connection's id; absent for messages published by server code. */
  from?: string;
  /** The publisher's id for the message: (from, id, content) is deduplicated within the log window. */
  id: string;
  /** The body, as JSON text. */
  data: string;
  /** Connection ids left out, room-wide. */
  except?: string[];
  /** Only connections with this tag, room-wide. */
  tag?: string;
}

/** A message in the room's order. */
export interface RoomMessage {
  /** Its room-wide sequence number (1, 2, 3, … with no holes). */
  seq: number;
  from?: string;
  data: string;
  except?: string[];
  tag?: string;
}

/** What a shard tells the sequencer about itself with each call. */
export interface ShardReport {
  /** The shard's object name (`<room>#<index>`). */
  name: string;
  /** The name of the Durable Object binding the shard's class is bound to: the sequencer delivers through `env[binding]`. */
  binding: string;
  /** Its open connections. */
  connections: number;
}

/** The sequencer's answer to a join. */
export interface Joined {
  /** The seq the shard is registered at: deliveries bring everything after it. */
  at: number;
  /** The key the sequencer's deliveries carry: the shard accepts no delivery without it. */
  key: string;
  /**
   * The epoch of the room's order: made with the sequencer's storage, so a sequencer that lost its
   * storage (and numbers messages from 1 again) answers with another one.
   */
  epoch: string;
  /** The room-wide connection count. */
  count: number;
}

/** The sequencer's answer to a count report. */
export interface Reported {
  /** The room-wide connection count. */
  count: number;
  /** `false` when the shard is not registered (it then joins again). */
  registered: boolean;
}

/** The sequencer's answer to a publish. */
export interface Published {
  /** The seq of each message, in the order given (a duplicate gets its first seq). */
  seqs: number[];
  /** The room-wide connection count. */
  count: number;
  /** `false` when the publishing shard is not registered (it then joins again). */
  registered: boolean;
}

/** A range of the log (the sequencer's answer to `since`). */
export interface LogRange {
  /** Seqs after the asked one that the log no longer holds, if any. */
  gap?: { from: number; to: number };
  /** The messages after the asked seq (and after the gap), in order. */
  messages: RoomMessage[];
  /** The last seq this answer covers: ask again after it when `more`. */
  last: number;
  /** Whether the log holds more after `last` (the answer was cut at its limit). */
  more: boolean;
}

/** A delivery from the sequencer to a shard (the body of its request). */
export interface Delivery {
  /** New messages, in order (possibly none: `head` then says the shard is behind a trimmed log). */
  messages: RoomMessage[];
  /** The room's last seq when the delivery was made. */
  head: number;
  /** The room-wide connection count. */
  count: number;
  /** Room-wide presence, once the room has any (see PresenceNews). */
  presence?: PresenceNews;
}

/** A shard's answer to a delivery. */
export interface Delivered {
  /** The last seq the shard has sent its clients. */
  delivered: number;
  /** Its open connections. */
  connections: number;
}

/** The sequencer's methods a shard and the Worker call (over DO RPC). */
export interface SequencerApi {
  join(shard: ShardReport, delivered: number | null, epoch?: string): Promise<Joined>;
  leave(name: string): Promise<void>;
  report(shard: ShardReport): Promise<Reported>;
  publish(shard: ShardReport | null, messages: OutgoingMessage[]): Promise<Published>;
  since(after: number, limit?: number): Promise<LogRange>;
  presence(shard: ShardReport, update: PresenceUpdate | null, known: PresenceKnown | null): Promise<PresenceAnswer>;
}

/**
 * A shard's presence changes since its last report (`full`: its whole set, replacing what the
 * sequencer held). `gen` names the shard instance's stream of reports and `n` numbers them: the
 * sequencer applies a change only right after the one before it, and asks for the whole set otherwise.
 * An update over one call's bytes goes in parts, each numbered after the one before it (only the
 * first may be `full`); every part but the last has `more`, and the sequencer holds the parts aside
 * until the last one arrives, then applies them together.
 */
export interface PresenceUpdate {
  gen: string;
  n: number;
  full: boolean;
  /** `[connection id, value as JSON]`. */
  set: [string, string][];
  left: string[];
  /** More parts of this update follow (numbered `n + 1`, …). */
  more?: boolean;
}

/**
 * Room-wide presence as the sequencer sends it to shards (with deliveries, and as the answer to a
 * presence call): the entries of every shard that changed after `since`, each shard's whole set
 * (`[]`: it has none, or left the room). Without `since` it lists every shard the sequencer knows.
 */
export interface PresenceNews {
  /** Names the sequencer instance: a new one (after a reset) knows only what shards sent it since. */
  instance: string;
  /** The room-wide presence version this news brings a shard to. */
  version: number;
  /** The version this news starts after (absent: it lists every shard). */
  since?: number;
  /** By shard index: that shard's whole set, `[connection id, value as JSON]`. */
  shards?: Record<string, [string, string][]>;
}

/** What a shard knows of room-wide presence: the sequencer instance and version of the last news it applied. */
export interface PresenceKnown {
  instance: string;
  version: number;
}

/** The sequencer's answer to a presence call. */
export interface PresenceAnswer {
  /** The news since what the shard said it knows. */
  news: PresenceNews;
  /** The sequencer could not apply the update (it missed one before, or the shard is not registered): send the whole set. */
  resync: boolean;
}
