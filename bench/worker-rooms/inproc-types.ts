// What the in-process measure's holders (inproc.ts) and its driver (bench/rooms-inproc.ts) exchange.

/**
 * What a holder opens: `count` connections to the one object (`shards` 0), to the room over `shards`
 * shards, or (`shards` −N) to N plain objects like the one object, connection i to object i mod N.
 */
export interface OpenOptions {
  room: string;
  shards: number;
  count: number;
  /** The first connection's number: ids (`_pk`) are `c<first + i>`, unique across holders. */
  first: number;
  /** Connections being opened at once. */
  parallel: number;
}

/** One publish as a holder saw it. */
export interface Receipts {
  seq: number;
  /** The holder's open connections. */
  sockets: number;
  /** How many of them received the message (once each, or it is counted in `duplicates`). */
  received: number;
  /** The clock at each receipt, in ms. */
  times: number[];
}

/** A holder's state beside its receipts. */
export interface HolderStatus {
  /** The holder's instance (a random id and its construction time): another one than `open` answered from was reset or evicted. */
  instance: string;
  sockets: number;
  /** Connections a room welcomed (the one object sends no welcome: all of them). */
  welcomed: number;
  /** Connections whose latest room-wide count (welcome or `dokit_room_count`) is `size`. */
  counted: number;
  /** Connections closed or errored since they opened. */
  lost: number;
  /** Message frames received again, or out of order. */
  duplicates: number;
  /** Count frames received (`dokit_room_count`), on every connection. */
  countFrames: number;
}
