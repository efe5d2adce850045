import type { Capability, Claims, ConnectionSlot } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { DokitError } from "../lifecycle/errors";
import { isThenable } from "../thenable/is-thenable";
import { trySend } from "../frames/send";
import { overBytes } from "../utf8/size";
import { DOKIT_ERROR } from "../protocol/dokit-error";
import { PRESENCE, PRESENCE_REJECTED } from "../protocol/presence";
import { describeIssues, isStandardSchema, type StandardSchema } from "../schema/standard-schema";
import type { ConnectionPlugin, PluginDoor } from "../websockets/plugin";
import type { WebSockets } from "../websockets/websockets";
import type { PresenceErrorCode } from "./errors";

/**
 * A watcher with more than this many bytes not yet written to its socket (`bufferedAmount`) is sent
 * no more changes: it is owed a snapshot, which replaces them once its buffer has emptied. So what
 * presence queues for one connection is at most this plus one frame, whatever it does not read.
 * workerd counts those bytes on server sockets from 1.20261117 on (across events, until the socket
 * takes them); an earlier runtime has no `bufferedAmount`, and there presence sends as if every
 * buffer were empty (no bound).
 */
export const PRESENCE_LAG_BYTES = 65_536;
/** How long an owed snapshot is retried on the tick while nothing else happens (ms); later, the next change or presence frame retries it. */
const OWED_RETRY_MS = 10_000;

/** A synchronous check that throws to refuse a presence value (`connection`: whose value it is). */
export type PresenceCheck<P> = (value: P, connection: Connection) => void;

/** Options of {@link Presence}. */
export interface PresenceOptions<P> {
  /** The largest value, as JSON, in UTF-8 bytes: 1 to 8,192 (default 1,024). It lives in the connection's attachment. */
  maxBytes?: number;
  /** How long changes are held before they go out together, latest per connection: 16 to 1,000 ms (default 50). */
  tickMs?: number;
  /** Checks each value: a synchronous function that throws to refuse, or a Standard Schema (its output is kept). */
  validate?: PresenceCheck<P> | StandardSchema<unknown, P>;
  /**
   * Whether a watching connection receives presence (the snapshot and each tick's changes). Asked for
   * every viewer when something is sent, so it may read the connection's tags or state. Default: all.
   */
  visibleTo?: (viewer: Connection) => boolean;
}

/** One present connection. */
export interface Present<P> {
  /** The connection's id: its client's secret (see `Connection.id`), for server code only. */
  id: string;
  /** The connection's public id, what watchers are shown (`Connection.publicId`). */
  publicId: string;
  /** Its latest value (held changes included). */
  value: P;
}

/**
 * What `dokit/rooms` links to a Presence to spread it over a room's shards (not for application code):
 * it hears this object's changes as they go out, and may fetch the room's entries when a watcher asks
 * for a snapshot. The room's entries come back through {@link Presence.remote}.
 */
export interface PresenceLink {
  /** This object's changes as each tick sends them: `[public id, value as JSON]` pairs, and the public ids that left. */
  local(set: [string, string][], left: string[]): void;
  /** A watcher is sent a snapshot: the link may fetch the room's entries (they follow as changes, or as new snapshots). */
  snapshotting(): void;
}

/** A change held for the tick: the connection, and its value as JSON (`undefined`: it leaves). */
interface Held {
  connection: Connection;
  json: string | undefined;
  value: unknown;
}

/**
 * Who is here. Each connection may publish a small JSON value; every watching connection receives a
 * snapshot, then joins, updates and leaves, at most one frame per tick with the latest value of each
 * connection that changed. A value lives in its connection's attachment, so it survives hibernation;
 * a pending tick keeps the object in memory for at most `tickMs`. Readonly connections may be present.
 *
 * ```ts
 * readonly presence = new Presence<{ name: string; x: number; y: number }>();
 * readonly webSockets = new WebSockets({ presence: this.presence });
 * ```
 * Wire: `{"type":"dokit_presence", …}` both ways (docs/presence.md).
 */
export class Presence<P = unknown> implements Capability, ConnectionPlugin {
  readonly capabilityName = "Presence";
  /** Its name among WebSockets' plug-ins (`webSockets.plugin("presence")`: how dokit/rooms finds it). */
  readonly pluginName = "presence";
  /** The largest value, as JSON, in UTF-8 bytes. */
  readonly maxBytes: number;
  /** How long changes are held before they go out. */
  readonly tickMs: number;
  readonly #validate: PresenceOptions<P>["validate"];
  readonly #visibleTo: PresenceOptions<P>["visibleTo"];
  #sockets: WebSockets | undefined;
  /** Each connection's stored value (slot `presence`, its name since values lived among dokit's flags). */
  #value: ConnectionSlot<unknown> | undefined;
  /** Whether each connection watches (slot `watching`); unset until its first presence frame. */
  #watching: ConnectionSlot<boolean> | undefined;
  /** This tick's changes, by public id, in the order first changed. */
  readonly #held = new Map<string, Held>();
  /** Entries of other objects (a room's other shards), by public id, as JSON. */
  readonly #remote = new Map<string, string>();
  /** This tick's changes of those entries (`undefined`: it left). */
  readonly #remoteHeld = new Map<string, string | undefined>();
  #link: PresenceLink | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Watchers owed a snapshot (one was due while their outgoing buffer was not empty), by public id, with when it was first due. */
  readonly #owed = new Map<string, number>();

  /**
   * @param options - value bound, tick, validation and who sees presence
   * @throws DokitError INVALID_ARGUMENT for a bound or a tick out of range
   */
  constructor(options: PresenceOptions<P> = {}) {
    this.maxBytes = inRange("maxBytes", options.maxBytes ?? 1024, 1, 8192);
    this.tickMs = inRange("tickMs", options.tickMs ?? 50, 16, 1000);
    this.#validate = options.validate;
    this.#visibleTo = options.visibleTo;
  }

  attach(claims: Claims): void {
    // Only on protocol-enabled connections: elsewhere the frame is an ordinary message.
    claims.frame(PRESENCE, (connection, frame) => this.#receive(connection, frame), { protocolOnly: true });
  }

  /** Installed through WebSockets' plug-in door (its `presence` option): lists and sends through its connections. */
  plug(door: PluginDoor): void {
    this.#sockets = door.sockets;
    // A value's bound is checked when it is held (#accept), so the slot's is the largest `maxBytes` allows.
    this.#value = door.slot<unknown>("presence", { maxBytes: 8192 });
    this.#watching = door.slot<boolean>("watching", { maxBytes: 5 });
    door.claims.use(this);
  }

  /** The server closed a connection: it leaves with the next tick. */
  closing(connection: Connection): void {
    this.#leave(connection);
  }

  /** A connection's close event (a WebSockets plug-in's handler): it leaves with the next tick. */
  onClose(connection: Connection): void {
    this.#leave(connection);
  }

  /** @returns every present connection and its latest value */
  list(): Present<P>[] {
    const present: Present<P>[] = [];
    for (const connection of this.#connections()) {
      const value = this.#valueOf(connection);
      if (value !== undefined) present.push({ id: connection.id, publicId: connection.publicId, value });
    }
    return present;
  }

  /** @returns how many connections are present */
  count(): number {
    let count = 0;
    for (const connection of this.#connections()) if (this.#valueOf(connection) !== undefined) count++;
    return count;
  }

  /** @returns the latest value of a connection (or connection id), `undefined` when it is not present */
  get(connection: Connection | string): P | undefined {
    const open = typeof connection === "string" ? this.#connectionsOf().getConnection(connection) : connection;
    return open ? this.#valueOf(open) : undefined;
  }

  /**
   * Sets a connection's value from the server (validated and bounded like a client's); it goes out with the tick.
   * @throws DokitError PRESENCE_REJECTED when the value is refused (the previous one is kept)
   */
  set(connection: Connection, value: P): void {
    const refused = this.#accept(connection, value);
    if (refused) throw new DokitError<PresenceErrorCode>("PRESENCE_REJECTED", `${refused} (connection ${connection.id})`);
  }

  /** Makes a connection not present (its value goes; the connection stays open). */
  clear(connection: Connection): void {
    this.#accept(connection, null);
  }

  /** @returns what presence holds that keeps the object in memory: a tick with changes waiting, one line */
  keepsAwake(): string[] {
    if (!this.#timer) return [];
    const owed = this.#owed.size ? `, ${this.#owed.size} snapshot(s) owed to watchers that have not read the last one` : "";
    return [`presence: ${this.#held.size + this.#remoteHeld.size} change(s) waiting for the ${this.tickMs} ms tick${owed}`];
  }

  /** Links a room (`dokit/rooms` does, when its shard's WebSockets has this Presence): it hears each tick's changes. */
  link(link: PresenceLink): void {
    this.#link = link;
  }

  /** @returns this object's present connections as `[public id, value as JSON]` pairs (what a room's other shards are sent) */
  localEntries(): [string, string][] {
    return this.list().map(({ publicId, value }) => [publicId, JSON.stringify(value)]);
  }

  /**
   * Merges entries of other objects (a room's other shards) into what watchers receive: they go out
   * with the tick, in the same frames as this object's own changes, keyed by public id. A local
   * connection with the same public id wins. `resnapshot`: every watcher is sent a new snapshot at
   * once instead (after this object lost what it had told them, e.g. after a restart).
   */
  remote(set: readonly [string, string][], left: readonly string[], resnapshot = false): void {
    for (const id of left) {
      if (this.#remote.delete(id) && !resnapshot) this.#holdRemote(id, undefined);
    }
    for (const [id, json] of set) {
      if (this.#remote.get(id) === json) continue;
      this.#remote.set(id, json);
      if (!resnapshot) this.#holdRemote(id, json);
    }
    if (!resnapshot) return;
    for (const connection of this.#connections()) if (this.#watches(connection)) this.#offer(connection, false);
  }

  /** A connection closed: it leaves with the next tick (if it was present). */
  left(connection: Connection): void {
    this.#leave(connection);
  }

  /** @returns whether a connection watches presence and speaks the protocol */
  #watches(connection: Connection): boolean {
    return this.#watching?.get(connection) === true && this.#sockets?.isProtocolEnabled(connection) === true;
  }

  // ------------------------------------------------------------------ inside

  /** `{"type":"dokit_presence","value"?,"watch"?}` from a client. */
  #receive(connection: Connection, frame: Record<string, unknown>): void {
    const watch = frame.watch;
    if (watch !== undefined && typeof watch !== "boolean") return this.#refuse(connection, "watch must be true or false");
    if (Object.hasOwn(frame, "value")) {
      const refused = this.#accept(connection, frame.value);
      if (refused) this.#refuse(connection, refused);
    }
    // The first presence frame makes a watcher unless it says otherwise; later ones change it only when they say so.
    const watching = this.#watching?.get(connection);
    if (watch === false ? watching !== false : watch === true ? watching !== true : watching === undefined) {
      this.#watching?.set(connection, watch !== false);
      if (watch !== false) this.#offer(connection, true);
      else this.#owed.delete(connection.publicId);
    }
    // Owed a snapshot and has read the last answer: served now.
    if (this.#owed.size && this.#owed.has(connection.publicId) && queued(connection) === 0 && this.#watching?.get(connection)) {
      this.#owed.delete(connection.publicId);
      this.#snapshot(connection, true);
    }
  }

  /**
   * Holds a new value (`null`: the connection leaves) for the tick.
   * @returns why it was refused, or `undefined`
   */
  #accept(connection: Connection, value: unknown): string | undefined {
    if (value === null) return void this.#leave(connection);
    let kept: unknown = value;
    let json: string | undefined;
    try {
      json = JSON.stringify(value);
    } catch {
      // Cycles, BigInt: only the server's own set() can pass such a value.
    }
    if (json === undefined) return "Presence value is not JSON";
    if (overBytes(json, this.maxBytes)) return `Presence value over ${this.maxBytes} bytes`;
    if (this.#validate) {
      try {
        kept = this.#check(value, connection);
      } catch {
        return "Presence value rejected";
      }
      if (kept !== value) json = JSON.stringify(kept);
    }
    this.#hold(connection, json, kept);
    return undefined;
  }

  /** @returns the value to keep (a schema's output, or `value`) @throws when the validator refuses it */
  #check(value: unknown, connection: Connection): unknown {
    const validate = this.#validate;
    if (isStandardSchema(validate)) {
      const result = validate["~standard"].validate(value);
      if (isThenable(result)) throw new Error("a presence schema must validate synchronously");
      if (result.issues) throw new Error(describeIssues(result.issues));
      return result.value;
    }
    // SAFETY: the check receives a candidate P; refusing values that are not is its job.
    (validate as PresenceCheck<P>)(value as P, connection);
    return value;
  }

  /** A connection leaves presence (it closed, or cleared its value). */
  #leave(connection: Connection): void {
    const held = this.#held.get(connection.publicId);
    // A newer connection with this id (it replaced this one) has a change waiting: that change stands.
    if (held && held.connection !== connection) return;
    if (this.#value?.get(connection) === undefined) {
      // Never sent out: nobody heard of it, so nobody is told it left.
      if (held) this.#held.delete(connection.publicId);
      return;
    }
    this.#hold(connection, undefined, undefined);
  }

  #hold(connection: Connection, json: string | undefined, value: unknown): void {
    this.#held.set(connection.publicId, { connection, json, value });
    this.#timer ??= setTimeout(() => this.#flush(), this.tickMs);
  }

  #holdRemote(id: string, json: string | undefined): void {
    this.#remoteHeld.set(id, json);
    this.#timer ??= setTimeout(() => this.#flush(), this.tickMs);
  }

  /** The tick ends: the held values are stored, and one frame carries them to every watcher. */
  #flush(): void {
    this.#timer = undefined;
    const sockets = this.#sockets;
    let set = "";
    let left = "";
    const link = this.#link;
    const localSet: [string, string][] = [];
    const localLeft: string[] = [];
    for (const [id, { connection, json, value }] of this.#held) {
      try {
        if (json === undefined) {
          if (connection.readyState === 1) this.#value?.set(connection, undefined);
          // A newer connection with this id replaced it: the id is still here.
          const current = sockets?.getConnection(connection.id);
          if (current && current !== connection) continue;
          if (link) localLeft.push(id);
          // Another shard of a room holds this id: its entry stands.
          const remote = this.#remote.get(id);
          if (remote !== undefined) set += `${set ? "," : ""}[${JSON.stringify(id)},${remote}]`;
          else left += `${left ? "," : ""}${JSON.stringify(id)}`;
        } else {
          if (connection.readyState !== 1) continue;
          this.#value?.set(connection, value);
          if (link) localSet.push([id, json]);
          set += `${set ? "," : ""}[${JSON.stringify(id)},${json}]`;
        }
      } catch {
        // The attachment is full (its user state and the value together): the value is not kept.
        this.#refuse(connection, "Presence value does not fit the connection's attachment");
      }
    }
    this.#held.clear();
    // The public ids present here (their values were just stored), looked up once for every remote change.
    const local = this.#remoteHeld.size ? new Set(this.list().map((present) => present.publicId)) : undefined;
    for (const [id, json] of this.#remoteHeld) {
      // A connection of this object with the same public id wins.
      if (local?.has(id)) continue;
      if (json === undefined) left += `${left ? "," : ""}${JSON.stringify(id)}`;
      else set += `${set ? "," : ""}[${JSON.stringify(id)},${json}]`;
    }
    this.#remoteHeld.clear();
    if (link && (localSet.length || localLeft.length)) link.local(localSet, localLeft);
    if (set || left) this.#toWatchers(`{"type":"${PRESENCE}"${set && `,"set":[${set}]`}${left && `,"left":[${left}]`}}`);
    if (this.#owed.size) this.#serveOwed();
  }

  #toWatchers(frame: string): void {
    const owed = this.#owed;
    for (const connection of this.#connections()) {
      if (!this.#watches(connection) || !this.#sees(connection)) continue;
      // Owed a snapshot: it will replace this change. Behind on reading: owed one from now on.
      if (owed.size && owed.has(connection.publicId)) continue;
      if (queued(connection) > PRESENCE_LAG_BYTES) this.#owe(connection);
      else trySend(connection, frame);
    }
  }

  /**
   * A snapshot is due (a new watcher, or this object lost what it told watchers): sent now when
   * the connection's outgoing buffer is empty, else owed, so a client that asks again and again
   * without reading has one answer pending at most (`fetch`: the room's link may fetch the other
   * shards' entries, once per answer).
   */
  #offer(connection: Connection, fetch: boolean): void {
    if (queued(connection) > 0 || this.#owed.has(connection.publicId)) return this.#owe(connection);
    this.#snapshot(connection, fetch);
  }

  #owe(connection: Connection): void {
    if (!this.#owed.has(connection.publicId)) this.#owed.set(connection.publicId, Date.now());
    this.#timer ??= setTimeout(() => this.#flush(), this.tickMs);
  }

  /** Sends the owed snapshots whose watchers have read everything; the tick retries the others for a while. */
  #serveOwed(): void {
    const owed = this.#owed;
    const now = Date.now();
    let waiting = false;
    const present = new Set<string>();
    for (const connection of this.#connections()) {
      const id = connection.publicId;
      const since = owed.get(id);
      if (since === undefined) continue;
      present.add(id);
      if (!this.#watches(connection)) owed.delete(id);
      else if (queued(connection) === 0) {
        owed.delete(id);
        this.#snapshot(connection, true);
      } else if (now - since < OWED_RETRY_MS) waiting = true;
    }
    // Those that closed owe nothing.
    for (const id of owed.keys()) if (!present.has(id)) owed.delete(id);
    if (waiting) this.#timer ??= setTimeout(() => this.#flush(), this.tickMs);
  }

  /** Sends a new watcher everyone present, itself included (`fetch`: the room's link may fetch the other shards' entries). */
  #snapshot(connection: Connection, fetch = true): void {
    if (!this.#sees(connection)) return;
    if (fetch) this.#link?.snapshotting();
    let all = "";
    const local = new Set<string>();
    for (const { publicId, value } of this.list()) {
      local.add(publicId);
      all += `${all ? "," : ""}[${JSON.stringify(publicId)},${JSON.stringify(value)}]`;
    }
    for (const [id, json] of this.#remote) if (!local.has(id)) all += `${all ? "," : ""}[${JSON.stringify(id)},${json}]`;
    trySend(connection, `{"type":"${PRESENCE}","you":${JSON.stringify(connection.publicId)},"all":[${all}]}`);
  }

  /** @returns whether `viewer` receives presence (a throwing `visibleTo` says no, and is logged) */
  #sees(viewer: Connection): boolean {
    if (!this.#visibleTo) return true;
    try {
      return this.#visibleTo(viewer) === true;
    } catch (error) {
      console.error("dokit: Presence's visibleTo threw; the connection receives no presence", error);
      return false;
    }
  }

  /** Tells the client its presence frame was refused; its previous value stays. */
  #refuse(connection: Connection, reason: string): void {
    trySend(connection, JSON.stringify({ type: DOKIT_ERROR, code: PRESENCE_REJECTED, error: reason }));
  }

  /** @returns the latest value of an open connection (held or stored), `undefined` when not present */
  #valueOf(connection: Connection): P | undefined {
    const held = this.#held.get(connection.publicId);
    // SAFETY: only values that passed #accept are held and stored.
    if (held?.connection === connection) return held.json === undefined ? undefined : (held.value as P);
    return this.#value?.get(connection) as P | undefined;
  }

  #connections(): IterableIterator<Connection> {
    return this.#connectionsOf().getConnections();
  }

  #connectionsOf(): WebSockets {
    if (!this.#sockets) {
      throw new DokitError<PresenceErrorCode>("NOT_INSTALLED", "this Presence is not installed: new WebSockets({ presence }), then Lifecycle.install(this).use(webSockets)");
    }
    return this.#sockets;
  }
}

/** @returns the bytes the runtime has not yet written to the connection's socket (0 where it does not say) */
function queued(connection: Connection): number {
  return connection.bufferedAmount ?? 0;
}

/** @returns `value` when it is a number from `min` to `max` @throws DokitError INVALID_ARGUMENT otherwise */
function inRange(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !(value >= min && value <= max)) {
    throw new DokitError<PresenceErrorCode>("INVALID_ARGUMENT", `Presence: ${name} must be ${min} to ${max} (got ${String(value)})`);
  }
  return value;
}
