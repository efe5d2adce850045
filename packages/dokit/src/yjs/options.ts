import type { Doc } from "yjs";
import type { Connection, ConnectionContext } from "../lifecycle/connection";

/** Options of `YjsDocument`. */
export interface YjsDocumentOptions {
  /**
   * The path below the object's base whose upgrades speak Yjs (default `"/yjs"`: clients connect to
   * `/agents/<class>/<name>/yjs`). `"/"` serves the Yjs wire on the object's own URL, where the
   * JSON protocol then cannot connect.
   */
  path?: string;
  /**
   * Decides whether a connection may only read: it receives the document and awareness, its updates
   * are refused (told with y-protocols' "permission denied"). WebSockets' own `readonly` decision
   * also applies. Default: every connection may write.
   */
  readonly?: (connection: Connection, ctx: ConnectionContext) => boolean | Promise<boolean>;
  /**
   * Called after the document changed (by a client or by the server), debounced: `changeDelayMs`
   * after the last change, and at least every `changeMaxWaitMs` while changes continue. For side
   * effects (search indexing, copies elsewhere); the document is already stored when it runs.
   */
  onChange?: (doc: Doc) => void | Promise<void>;
  /** Quiet time before `onChange` runs: 0 to 60,000 ms (default 1,000). */
  changeDelayMs?: number;
  /** The longest `onChange` waits while changes keep coming: 0 to 600,000 ms (default 10,000). */
  changeMaxWaitMs?: number;
  /**
   * When the stored updates are compacted into the snapshot: after `updates` updates (default 1,000),
   * or once they hold `bytes` bytes (default 1 MiB) or as many bytes as the snapshot, whichever is larger.
   */
  compactAfter?: { updates?: number; bytes?: number };
  /**
   * The largest awareness state of one connection kept in its attachment across hibernation, as JSON
   * bytes: 0 to 8,192 (default 4,096). A larger one is relayed but not kept: after a wake others see it
   * again when its client renews it (every 15 s by default in y-protocols).
   */
  maxAwarenessBytes?: number;
  /**
   * The most awareness clients one connection speaks for: 1 to 64 (default 4; a provider speaks for
   * one). A client id belongs to the connection that first announced it until that connection closes;
   * new ids past the bound are not relayed or kept.
   */
  maxAwarenessClientsPerConnection?: number;
  /** The most awareness clients the document's connections speak for together: 1 to 100,000 (default 500). */
  maxAwarenessClients?: number;
  /**
   * The largest update a client may send, in bytes: 1,024 to 33,554,432 (default 8 MiB). A larger one
   * closes its sender with 1007 `Yjs update too large`; nothing of it is stored. Server-side changes are not bound.
   */
  maxUpdateBytes?: number;
  /**
   * The most structs (Yjs items, plus two per deleted range) one client update may add: 1 to
   * 10,000,000 (default 50,000). Over it, as for `maxUpdateBytes`.
   */
  maxUpdateStructs?: number;
  /**
   * The most structs the document may hold after a client's update: 1 to 10,000,000 (default
   * 200,000, about 38 MB of heap once loaded). A client update that would pass it is refused as for
   * `maxUpdateBytes`; server-side changes are not bound.
   */
  maxDocumentStructs?: number;
  /** Yjs garbage collection of deleted content (default `true`; `false` keeps history for snapshots). */
  gc?: boolean;
}
