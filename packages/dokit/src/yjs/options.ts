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
  /** Yjs garbage collection of deleted content (default `true`; `false` keeps history for snapshots). */
  gc?: boolean;
}
