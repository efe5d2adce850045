import { applyUpdate, Doc, encodeStateAsUpdate, encodeStateVector, encodeStateVectorFromUpdate, decodeStateVector } from "yjs";
import type { Array as YArray, Map as YMap, Text as YText, XmlFragment as YXmlFragment } from "yjs";
import type { Capability, Claims, ConnectionSlot } from "../lifecycle/capability";
import type { Connection, ConnectionContext } from "../lifecycle/connection";
import { runInContext } from "../lifecycle/context";
import { DokitError } from "../lifecycle/errors";
import { subPath } from "../lifecycle/headers";
import type { Lifecycle } from "../lifecycle/lifecycle";
import { closeWith } from "../frames/close";
import { normalizeRoute } from "../lifecycle/requests";
import { trySend } from "../frames/send";
import type { ConnectionPlugin, PluginDoor } from "../websockets/plugin";
import type { WebSockets } from "../websockets/websockets";
import { type AwarenessEntry, writeAwareness } from "./awareness";
import { Answers } from "./answers";
import { AwarenessRelay } from "./awareness-relay";
import { countStructs, documentStructs, OverBound } from "./bounds";
import type { YjsErrorCode } from "./errors";
import type { YjsDocumentOptions } from "./options";
import { MESSAGE_BYTES, splitUpdate } from "./chunks";
import { DocumentStore, type StoreSize } from "./store";
import {
  awarenessMessage,
  MalformedMessage,
  MESSAGE_AUTH,
  MESSAGE_AWARENESS,
  MESSAGE_QUERY_AWARENESS,
  MESSAGE_SYNC,
  permissionDenied,
  Reader,
  SYNC_STEP_1,
  SYNC_STEP_2,
  SYNC_UPDATE,
  syncMessage,
} from "./wire";

/** The close code for a message that is not the Yjs wire (RFC 6455: inconsistent data). */
const CLOSE_INVALID = 1007;
const INVALID_REASON = "Invalid Yjs message";
/** The close reason for an update over the document's bounds. */
const TOO_LARGE_REASON = "Yjs update too large";
/** What a Yjs connection keeps in its slot: set on every connection that speaks the Yjs wire, with its latest awareness entries when they fit. */
interface YjsSlot {
  awareness?: AwarenessEntry[];
}

/** What a readonly connection is told when it sends an update. */
export const READONLY_REASON = "Connection is readonly";

/**
 * One Yjs document per object, served over the object's hibernating WebSockets with the
 * y-protocols wire, so y-websocket's and y-partyserver's providers connect unchanged. Every
 * update is stored in SQLite before it is applied, relayed or answered; stored updates are
 * compacted into a snapshot split across rows, so documents far beyond 2 MB work. The
 * document is loaded on the first event that needs it after a wake.
 *
 * ```ts
 * readonly doc = new YjsDocument({ onChange: (doc) => index(doc.getText("body").toString()) });
 * readonly webSockets = new WebSockets({ yjs: this.doc });
 * readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
 * ```
 * Clients connect to `/agents/<class>/<name>/yjs` (docs/yjs.md); JSON-protocol clients keep the object's own URL.
 */
export class YjsDocument implements Capability, ConnectionPlugin {
  readonly capabilityName = "YjsDocument";
  /** Its name among WebSockets' plug-ins. */
  readonly pluginName = "yjs";
  /** The path (below the object's base) whose upgrades speak Yjs. */
  readonly path: string;
  readonly #options: YjsDocumentOptions;
  readonly #compactUpdates: number;
  readonly #compactBytes: number;
  readonly #awareness: AwarenessRelay;
  readonly #changeDelayMs: number;
  readonly #changeMaxWaitMs: number;
  readonly #maxUpdateBytes: number;
  readonly #maxUpdateStructs: number;
  readonly #maxDocumentStructs: number;
  #lifecycle: Lifecycle | undefined;
  #sockets: WebSockets | undefined;
  /** WebSockets' plug-in door, which lists the Yjs connections through the platform's tag index. */
  #door: PluginDoor | undefined;
  /** Marks the Yjs connections and keeps their awareness (slot `yjs`, its name since it lived among dokit's flags). */
  #slot: ConnectionSlot<YjsSlot> | undefined;
  #store: DocumentStore | undefined;
  #doc: Doc | undefined;
  /** The connection whose update is being applied: the document's update event for it stores nothing (it is stored). */
  #applying: Connection | undefined;
  #changeTimer: ReturnType<typeof setTimeout> | undefined;
  /** Counts the document's changes since the object woke, so a repeated sync step 1 with nothing new is not answered again. */
  #version = 0;
  /** Which sync step 1 requests are answered. */
  readonly #syncAnswers = new Answers();
  /** When a pending `onChange` must run at the latest (ms since epoch). */
  #changeDue = 0;

  /**
   * @param options - path, readonly decision, change hook, compaction and awareness bounds
   * @throws DokitError INVALID_ARGUMENT for an option out of range
   */
  constructor(options: YjsDocumentOptions = {}) {
    this.#options = options;
    const path = options.path ?? "/yjs";
    if (typeof path !== "string" || !path.startsWith("/")) throw invalid(`path must start with "/" (got ${String(path)})`);
    this.path = normalizeRoute(path);
    this.#compactUpdates = inRange("compactAfter.updates", options.compactAfter?.updates ?? 1000, 1, 1_000_000);
    this.#compactBytes = inRange("compactAfter.bytes", options.compactAfter?.bytes ?? 1024 * 1024, 1, 1 << 30);
    this.#awareness = new AwarenessRelay(
      {
        maxBytes: inRange("maxAwarenessBytes", options.maxAwarenessBytes ?? 4096, 0, 8192),
        perConnection: inRange("maxAwarenessClientsPerConnection", options.maxAwarenessClientsPerConnection ?? 4, 1, 64),
        perDocument: inRange("maxAwarenessClients", options.maxAwarenessClients ?? 500, 1, 100_000),
      },
      () => this.getConnections(),
      (message, except) => this.#toClients([message], except),
      {
        get: (connection) => this.#slot?.get(connection)?.awareness,
        set: (connection, awareness) => this.#slot?.set(connection, { awareness }),
      },
    );
    this.#changeDelayMs = inRange("changeDelayMs", options.changeDelayMs ?? 1000, 0, 60_000);
    this.#changeMaxWaitMs = inRange("changeMaxWaitMs", options.changeMaxWaitMs ?? 10_000, 0, 600_000);
    this.#maxUpdateBytes = inRange("maxUpdateBytes", options.maxUpdateBytes ?? 8 * 1024 * 1024, 1024, 32 * 1024 * 1024);
    this.#maxUpdateStructs = inRange("maxUpdateStructs", options.maxUpdateStructs ?? 50_000, 1, 10_000_000);
    this.#maxDocumentStructs = inRange("maxDocumentStructs", options.maxDocumentStructs ?? 200_000, 1, 10_000_000);
  }

  /**
   * The document is installed by the WebSockets that serves it (its `yjs` option, through the
   * plug-in door: {@link plug}), which claims all it needs; `use(doc)` adds nothing to that.
   * @throws DokitError NOT_INSTALLED when it is used before or without such a WebSockets (in the
   *   object's constructor, where `use()` runs): its Yjs connections would get the JSON protocol's frames
   */
  attach(_claims: Claims): void {
    if (!this.#sockets) throw notServed();
  }

  /** @returns whether an upgrade is for the Yjs wire: its path below the object's base is {@link path} */
  serves(request: Request): boolean {
    return normalizeRoute(subPath(request)) === this.path;
  }

  /**
   * Installed through WebSockets' plug-in door (its `yjs` option): serves the connections whose
   * upgrade is for {@link path} (`serves`), which the door tags for it on accept, and forgets the document on destroy.
   */
  plug(door: PluginDoor): void {
    this.#door = door;
    this.#sockets = door.sockets;
    this.#lifecycle = door.claims.lifecycle;
    this.#slot = door.slot<YjsSlot>("yjs", { maxBytes: 16_384, check: (value): value is YjsSlot => typeof value === "object" && value !== null });
    door.claims.onDestroy(() => this.#forget());
  }

  /** A new connection (a WebSockets plug-in's handler): a Yjs one is marked, told the server's state vector, and sent everyone's awareness. */
  onConnect(connection: Connection, ctx: ConnectionContext): Promise<void> | undefined {
    return this.serves(ctx.request) ? this.#connect(connection, ctx) : undefined;
  }

  /** A binary message (a WebSockets plug-in's claim): @returns `true` for a Yjs connection's, handled here */
  binary(connection: Connection, message: ArrayBuffer): boolean {
    return this.#message(connection, message);
  }

  /** A connection closed (a WebSockets plug-in's handler): its clients' awareness goes. */
  onClose(connection: Connection): void {
    this.#syncAnswers.forget(connection.id);
    this.#awareness.left(connection);
  }

  // ------------------------------------------------------------ server side

  /** The document, loaded from storage on first use after a wake. Changes made to it are stored and reach every client. */
  get doc(): Doc {
    return this.#doc ?? this.#load();
  }

  /** Whether the document is in memory (it is loaded on the first event that needs it after a wake). */
  get loaded(): boolean {
    return this.#doc !== undefined;
  }

  /**
   * Runs `fn` in one Yjs transaction on the document: its changes are stored once, then sent to every client.
   * @returns what `fn` returns
   */
  transact<T>(fn: (doc: Doc) => T): T {
    const doc = this.doc;
    let result: T | undefined;
    doc.transact(() => {
      result = fn(doc);
    }, this);
    // SAFETY: transact ran fn, which set result.
    return result as T;
  }

  /** @returns the document's shared text `name` */
  getText(name = ""): YText {
    return this.doc.getText(name);
  }

  /** @returns the document's shared map `name` */
  getMap<T = unknown>(name = ""): YMap<T> {
    return this.doc.getMap<T>(name);
  }

  /** @returns the document's shared array `name` */
  getArray<T = unknown>(name = ""): YArray<T> {
    return this.doc.getArray<T>(name);
  }

  /** @returns the document's shared XML fragment `name` (ProseMirror / Tiptap bindings use one) */
  getXmlFragment(name = ""): YXmlFragment {
    return this.doc.getXmlFragment(name);
  }

  /** @returns the open connections that speak the Yjs wire (those whose upgrade was for {@link path}) */
  getConnections(): Connection[] {
    return [...this.#yjsConnections()];
  }

  /**
   * The awareness (names, cursors) of the clients a Yjs connection speaks for, as the object keeps it
   * in the connection's attachment: what they published last, none that left. A state over
   * `maxAwarenessBytes` is not kept and reads `undefined`.
   * @returns one entry per client: its Yjs client id and its state
   */
  getAwareness(connection: Connection): { clientID: number; state: unknown }[] {
    return this.#awareness.of(connection);
  }

  /**
   * @returns what storage holds: the snapshot's bytes, and the updates stored since (count and bytes).
   *   A document not in memory is measured in SQL, not loaded.
   */
  storedSize(): StoreSize {
    const store = this.#storeOf();
    return this.#doc ? { ...store.size } : store.measure();
  }

  /** Compacts now: the whole document becomes the snapshot, and the updates it covers are deleted. */
  compact(): void {
    this.#storeOf().compact(encodeStateAsUpdate(this.doc));
  }

  /** @returns what keeps the object in memory: a pending `onChange`, one line (else none) */
  keepsAwake(): string[] {
    return this.#changeTimer ? [`yjs: onChange waiting for ${this.#changeDelayMs} ms of quiet`] : [];
  }

  // ---------------------------------------------------------------- loading

  #load(): Doc {
    const store = this.#storeOf();
    const doc = new Doc({ gc: this.#options.gc !== false });
    const { snapshot, updates } = store.load();
    doc.transact(() => {
      if (snapshot) applyUpdate(doc, snapshot);
      for (const update of updates) {
        try {
          applyUpdate(doc, update);
        } catch (error) {
          // Every stored update was applied once before it was kept; one that no longer applies (a row
          // altered by hand) is logged and left out, so it cannot keep the document from loading.
          console.error("dokit: YjsDocument left out a stored update it cannot apply", error);
        }
      }
    });
    // Changes made on the server (any origin but a client's update being applied): stored, then sent to everyone.
    doc.on("update", (update: Uint8Array, origin: unknown) => {
      // A change an observer makes while a client's update is applied has another origin: it is stored.
      if (origin !== undefined && origin === this.#applying) return;
      try {
        store.append(update);
      } catch (error) {
        // Not stored: the document in memory is ahead of storage, so it is read again; the caller hears of it.
        this.#unload();
        throw error;
      }
      this.#toClients(updateMessages(update), undefined);
      this.#changed();
    });
    this.#doc = doc;
    return doc;
  }

  /**
   * Drops the document from memory: the next event loads it again from storage. It may be called
   * inside one of the document's transactions, so the old document is destroyed once that ends.
   */
  #unload(): void {
    const doc = this.#doc;
    this.#doc = undefined;
    if (doc) queueMicrotask(() => doc.destroy());
  }

  #forget(): void {
    if (this.#changeTimer) clearTimeout(this.#changeTimer);
    this.#changeTimer = undefined;
    this.#unload();
  }

  // ------------------------------------------------------------ connections

  /** A new connection: Yjs ones are marked, told the server's state vector, and sent everyone's awareness. */
  async #connect(connection: Connection, ctx: ConnectionContext): Promise<void> {
    const readonly = this.#options.readonly ? (await this.#options.readonly(connection, ctx)) === true : false;
    if (readonly) this.#connectionsOf().setReadonly(connection);
    this.#slot?.set(connection, {});
    trySend(connection, syncMessage(SYNC_STEP_1, encodeStateVector(this.doc)));
    const present = this.#awareness.all(connection);
    if (present.length) trySend(connection, awarenessMessage(writeAwareness(present)));
  }

  /** @returns `true` when the message was a Yjs connection's binary message (handled here) */
  #message(connection: Connection, message: ArrayBuffer): boolean {
    if (!this.#isYjs(connection)) return false;
    try {
      this.#receive(connection, new Uint8Array(message));
    } catch (error) {
      // Not the Yjs wire, an update Yjs cannot read, or one over the bounds: the sender is closed; nothing was stored or relayed.
      const known = error instanceof MalformedMessage || error instanceof OverBound;
      console.warn(`dokit: YjsDocument closed connection ${connection.id}: ${known ? error.message : "its update could not be applied"}`);
      closeWith(connection, CLOSE_INVALID, error instanceof OverBound ? TOO_LARGE_REASON : INVALID_REASON);
    }
    return true;
  }

  #receive(connection: Connection, bytes: Uint8Array): void {
    const reader = new Reader(bytes);
    switch (reader.uint()) {
      case MESSAGE_SYNC: {
        const subtype = reader.uint();
        const payload = reader.bytes();
        // [0, 0, stateVector]: answered with what the client lacks; a repeat only once the document changed (answers.ts).
        if (subtype === SYNC_STEP_1) return void (this.#syncAnswers.take(connection.id, this.#version) && sendStep2(connection, encodeStateAsUpdate(this.doc, payload)));
        // [0, 1, update] (the client's answer to our step 1) or [0, 2, update]
        if (subtype === SYNC_STEP_2 || subtype === SYNC_UPDATE) return this.#update(connection, payload, subtype, reader.done ? bytes : undefined);
        throw new MalformedMessage(`unknown sync message ${subtype}`);
      }
      // [1, awarenessUpdate]
      case MESSAGE_AWARENESS:
        return this.#awareness.receive(connection, reader.bytes(), bytes);
      // [3]: everyone's awareness, unless this connection was just answered (AwarenessRelay.answer)
      case MESSAGE_QUERY_AWARENESS: {
        const answer = this.#awareness.answer(connection);
        return void (answer && trySend(connection, answer));
      }
      // [2, …]: auth is the server's to send; a client's is ignored, as are types this version does not know.
      case MESSAGE_AUTH:
      default:
        return;
    }
  }

  /**
   * A client's update: stored, then applied, then relayed to the other Yjs connections.
   * @param message - the whole message that carried it, when nothing follows the update (then relayed as it came)
   */
  #update(connection: Connection, update: Uint8Array, subtype: number, message: Uint8Array | undefined): void {
    if (isEmptyUpdate(update)) return;
    if (update.byteLength > this.#maxUpdateBytes) throw new OverBound(`an update of ${update.byteLength} bytes is over maxUpdateBytes (${this.#maxUpdateBytes})`);
    const doc = this.doc;
    if (this.#connectionsOf().isReadonly(connection)) {
      // A sync answer that adds nothing (a reconnecting viewer's) is not worth a refusal.
      if (subtype === SYNC_UPDATE || addsContent(doc, update)) trySend(connection, permissionDenied(READONLY_REASON));
      return;
    }
    this.#checkStructs(doc, update);
    const store = this.#storeOf();
    const seq = store.append(update);
    this.#applying = connection;
    try {
      applyUpdate(doc, update, connection);
    } catch (error) {
      // Not stored after all, and the document in memory may hold part of it: read it again from storage.
      store.remove(seq, update.byteLength);
      this.#unload();
      throw error;
    } finally {
      this.#applying = undefined;
    }
    this.#toClients(message && update.byteLength <= MESSAGE_BYTES ? [relayed(message, subtype)] : updateMessages(update), connection);
    this.#changed();
  }

  /**
   * Refuses an update with more structs than one update or the document may hold, counted before
   * anything is stored (bounds.ts).
   * @throws OverBound naming the bound
   * @throws what Yjs throws for an update it cannot read
   */
  #checkStructs(doc: Doc, update: Uint8Array): void {
    const structs = countStructs(update, this.#maxUpdateStructs);
    if (structs > this.#maxUpdateStructs) throw new OverBound(`an update of more than ${this.#maxUpdateStructs} structs is over maxUpdateStructs`);
    const total = documentStructs(doc) + structs;
    if (total > this.#maxDocumentStructs) throw new OverBound(`the document would hold ${total} structs, over maxDocumentStructs (${this.#maxDocumentStructs})`);
  }

  /**
   * Sends messages, in order, to every Yjs connection but `except` (the same bytes to each): those
   * the platform's tag index lists under the plug-in's tag, no other connection read.
   */
  #toClients(messages: readonly Uint8Array[], except: Connection | undefined): void {
    for (const connection of this.#yjsConnections()) {
      if (connection === except) continue;
      for (const message of messages) trySend(connection, message);
    }
  }

  // ------------------------------------------------------- after a change

  /** After a stored change: compacts when the policy says so, and schedules `onChange`. */
  #changed(): void {
    this.#version++;
    const size = this.#storeOf().size;
    if (size.updates >= this.#compactUpdates || size.updateBytes >= Math.max(this.#compactBytes, size.snapshotBytes)) this.compact();
    if (!this.#options.onChange) return;
    const now = Date.now();
    if (this.#changeTimer) clearTimeout(this.#changeTimer);
    else this.#changeDue = now + this.#changeMaxWaitMs;
    this.#changeTimer = setTimeout(() => this.#runOnChange(), Math.max(0, Math.min(this.#changeDelayMs, this.#changeDue - now)));
  }

  async #runOnChange(): Promise<void> {
    this.#changeTimer = undefined;
    const doc = this.#doc;
    const onChange = this.#options.onChange;
    if (!doc || !onChange) return;
    try {
      await runInContext({ agent: this.#lifecycle?.host }, () => onChange(doc));
    } catch (error) {
      console.error("dokit: YjsDocument's onChange failed", error);
    }
  }

  // ------------------------------------------------------------------ parts

  /** @returns whether a connection speaks the Yjs wire (its slot is set) */
  #isYjs(connection: Connection): boolean {
    return this.#slot?.get(connection) !== undefined;
  }

  #storeOf(): DocumentStore {
    if (!this.#store) {
      const lifecycle = this.#lifecycle;
      if (!lifecycle) throw notServed();
      this.#store = new DocumentStore(lifecycle.ctx.storage);
    }
    return this.#store;
  }

  /** @returns the open Yjs connections, through the door (tagged on accept) */
  #yjsConnections(): IterableIterator<Connection> {
    if (!this.#door) throw notServed();
    return this.#door.connections();
  }

  #connectionsOf(): WebSockets {
    if (!this.#sockets) throw notServed();
    return this.#sockets;
  }
}

/**
 * @returns a client's `[0, 1|2, update]` message as the `[0, 2, update]` the others receive: the same
 *   bytes for an update, a copy with the subtype changed for a sync answer (the length is unchanged)
 */
function relayed(message: Uint8Array, subtype: number): Uint8Array {
  if (subtype === SYNC_UPDATE) return message;
  const copy = message.slice();
  copy[1] = SYNC_UPDATE;
  return copy;
}

/** @returns `[0, 2, update]` messages carrying `update`, cut to fit WebSocket messages (chunks.ts) */
function updateMessages(update: Uint8Array): Uint8Array[] {
  return splitUpdate(update).map((piece) => syncMessage(SYNC_UPDATE, piece));
}

/** Answers a sync step 1: what the client lacks, as step 2; a large answer goes as updates first, the step 2 last (the client is synced then). */
function sendStep2(connection: Connection, update: Uint8Array): void {
  const pieces = splitUpdate(update);
  for (let i = 0; i < pieces.length; i++) trySend(connection, syncMessage(i === pieces.length - 1 ? SYNC_STEP_2 : SYNC_UPDATE, pieces[i] as Uint8Array));
}

/** @returns whether a v1 update carries nothing: no structs, no deletions (`[0, 0]`) */
function isEmptyUpdate(update: Uint8Array): boolean {
  return update.byteLength === 2 && update[0] === 0 && update[1] === 0;
}

/** @returns whether an update holds content the document lacks (deletions alone are not counted) */
function addsContent(doc: Doc, update: Uint8Array): boolean {
  const known = decodeStateVector(encodeStateVector(doc));
  for (const [client, clock] of decodeStateVector(encodeStateVectorFromUpdate(update))) {
    if (clock > (known.get(client) ?? 0)) return true;
  }
  return false;
}

function notServed(): DokitError<YjsErrorCode> {
  return new DokitError<YjsErrorCode>("NOT_INSTALLED", "this YjsDocument is not served: new WebSockets({ yjs: doc }), then Lifecycle.install(this).use(webSockets)");
}

function invalid(message: string): DokitError<YjsErrorCode> {
  return new DokitError<YjsErrorCode>("INVALID_ARGUMENT", `YjsDocument: ${message}`);
}

/** @returns `value` when it is a number from `min` to `max` @throws DokitError INVALID_ARGUMENT otherwise */
function inRange(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !(value >= min && value <= max)) throw invalid(`${name} must be ${min} to ${max} (got ${String(value)})`);
  return value;
}
