// The client side of `dokit/presence`: who else is connected to the object,
// each with a small value of the app's choosing (a name, a cursor). This
// connection's own value is kept here and sent again on every new socket;
// while the socket is down only the latest value is kept, never a queue of
// updates. The list is the server's view: a snapshot replaces it (diffed
// into joined, updated and left for listeners), change frames patch it.
import { PRESENCE } from "../protocol/presence";
import type { PresencePair } from "./read-frame";

/** One present connection: its id and its value. */
export interface PresenceEntry<P> {
  readonly id: string;
  readonly value: P;
}

/** What changed in the list, as listeners receive it. */
export interface PresenceChange<P> {
  /** Connections that were not in the list before. */
  readonly joined: PresenceEntry<P>[];
  /** Connections whose value changed. */
  readonly updated: PresenceEntry<P>[];
  /** Ids (not entries) of connections that left (closed, or cleared their value); their values are no longer in the list. */
  readonly left: string[];
}

/** What presence needs from its client. */
export interface PresenceSocket {
  /** Sends a frame on the open socket; `false` (nothing queued) when no socket is open. */
  sendNow(frame: string): boolean;
  /** Reports a value the server refused (the client's `onPresenceError`). */
  refused(error: string): void;
}

/** What the server's presence frames do to a client's presence (server-frames.ts). */
export interface PresenceFrames {
  snapshot(you: string, all: PresencePair[]): void;
  changes(set: PresencePair[], left: string[]): void;
  rejected(error: string): void;
}

/** @returns whether two values parsed from JSON are the same JSON */
const sameJson = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

/**
 * Presence for one client (`client.presence`). Nothing is sent until `set()`,
 * `watch()` or `subscribe()` is first called; from then on every new socket
 * gets this connection's value (or a watch request) as soon as it opens.
 */
export class ClientPresence<P = unknown> implements PresenceFrames {
  /** Everyone present, by id, as the server last said. */
  #entries = new Map<string, P>();
  #self: string | undefined;
  /** Whether this connection receives presence frames. */
  #watching = false;
  /**
   * Whether the current socket's server makes this connection a watcher: `undefined` before any
   * presence frame on it (its first one makes a watcher unless it says `watch:false`; later ones
   * change that only when they carry `watch`).
   */
  #serverWatching: boolean | undefined;
  /** This connection's value, sent on every new socket; `null` when it publishes none. */
  #value: { json: string; value: P } | null = null;
  readonly #listeners = new Set<(change: PresenceChange<P>) => void>();
  readonly #socket: PresenceSocket;

  /** @param socket - how frames reach the server */
  constructor(socket: PresenceSocket) {
    this.#socket = socket;
  }

  /** This connection's public id (the server's `you`, never `client.id`, which stays private); `undefined` until the first snapshot. */
  get self(): string | undefined {
    return this.#self;
  }

  /** How many connections are present, this one included when it has a value. */
  get count(): number {
    return this.#entries.size;
  }

  /**
   * Publishes this connection's value: sent now when the socket is open, else
   * kept (only the latest) and sent when one opens, and again after every
   * reconnect. Also starts watching.
   * @param value - any JSON value; `null` is the same as `clear()`
   * @throws TypeError when the value cannot be sent as JSON (nothing is sent, the old value is kept)
   */
  set(value: P): void {
    if (value === null) return this.clear();
    const json = JSON.stringify(value);
    if (json === undefined) throw new TypeError("dokit: a presence value must be a JSON value");
    this.#value = { json, value };
    this.#watching = true;
    this.#send(json);
  }

  /** Leaves the list (sends the value `null`); the connection stays open and keeps watching if it did. */
  clear(): void {
    if (!this.#value && !this.#watching) return; // nothing was ever sent
    this.#value = null;
    this.#send("null");
  }

  /** Receives presence without publishing a value; the server answers with a snapshot. */
  watch(): void {
    if (this.#watching) return;
    this.#watching = true;
    this.#send(undefined);
  }

  /** Stops receiving presence (a published value stays published); the list empties. */
  unwatch(): void {
    if (!this.#watching) return;
    this.#watching = false;
    this.#send(undefined);
    this.#replace(new Map(), true);
  }

  /** @returns everyone present, this connection included when it has a value, in the server's order */
  list(): PresenceEntry<P>[] {
    return [...this.#entries].map(([id, value]) => ({ id, value }));
  }

  /** @returns everyone present but this connection */
  others(): PresenceEntry<P>[] {
    return this.list().filter((entry) => entry.id !== this.#self);
  }

  /**
   * @param id - a connection id
   * @returns that connection's value, or `undefined` when it is not present
   */
  get(id: string): P | undefined {
    return this.#entries.get(id);
  }

  /**
   * Runs `listener` after every snapshot (the server's full list, on watching
   * and after each reconnect; its diff may be empty) and every change frame.
   * Subscribing starts watching; unsubscribing does not stop it (`unwatch()` does).
   * @returns a function that removes the listener
   */
  subscribe(listener: (change: PresenceChange<P>) => void): () => void {
    this.#listeners.add(listener);
    this.watch();
    return () => void this.#listeners.delete(listener);
  }

  // ── From the client ────────────────────────────────────────────────

  /** A socket opened: sends this connection's value, or a watch request, when presence is in use. */
  opened(): void {
    this.#serverWatching = undefined;
    if (this.#value || this.#watching) this.#send(this.#value?.json);
  }

  /** The connection stopped for good (`close()`, a final close): the list empties; the value is kept for `reconnect()`. */
  stopped(): void {
    this.#replace(new Map(), true);
  }

  /** A snapshot: `{"type":"dokit_presence","you","all"}`. */
  snapshot(you: string, all: PresencePair[]): void {
    if (!this.#watching) return; // answered a watch since withdrawn
    this.#self = you;
    // SAFETY: values are the app's presence type; the server validates what it accepts.
    this.#replace(new Map(all as [string, P][]), false);
  }

  /** A change frame: `{"type":"dokit_presence","set"?,"left"?}`. */
  changes(set: PresencePair[], left: string[]): void {
    if (!this.#watching) return;
    const change: PresenceChange<P> = { joined: [], updated: [], left: [] };
    // SAFETY: as in snapshot().
    for (const [id, value] of set as [string, P][]) {
      const known = this.#entries.has(id);
      if (known && sameJson(this.#entries.get(id), value)) continue; // e.g. this connection's own value, re-sent
      (known ? change.updated : change.joined).push({ id, value });
      this.#entries.set(id, value);
    }
    for (const id of left) if (this.#entries.delete(id)) change.left.push(id);
    if (change.joined.length || change.updated.length || change.left.length) this.#emit(change);
  }

  /**
   * The server refused a value (`dokit_error` `PRESENCE_REJECTED`). It kept the
   * connection's previous value, so that is what a reconnect sends from now on.
   */
  rejected(error: string): void {
    const held = this.#self === undefined ? undefined : this.#entries.get(this.#self);
    this.#value = held === undefined ? null : { json: JSON.stringify(held), value: held };
    this.#socket.refused(error);
  }

  /**
   * Sends a value (as JSON; `undefined`: none) and whether to watch, on the open socket. `watch`
   * is left out when the server would assume it, so a cursor's frames stay `{"type","value"}`.
   * @param json - the value as JSON, `"null"` to leave, `undefined` for a frame without a value
   */
  #send(json: string | undefined): void {
    const watching = this.#watching;
    const assumed = json !== undefined && (this.#serverWatching ?? true) === watching;
    const value = json === undefined ? "" : `,"value":${json}`;
    const frame = `{"type":"${PRESENCE}"${value}${assumed ? "" : `,"watch":${watching}`}}`;
    if (this.#socket.sendNow(frame)) this.#serverWatching = watching;
  }

  /** Replaces the list and tells listeners the difference (with `quietWhenSame`, only when there is one). */
  #replace(next: Map<string, P>, quietWhenSame: boolean): void {
    const change: PresenceChange<P> = { joined: [], updated: [], left: [] };
    for (const [id, value] of next) {
      if (!this.#entries.has(id)) change.joined.push({ id, value });
      else if (!sameJson(this.#entries.get(id), value)) change.updated.push({ id, value });
      else next.set(id, this.#entries.get(id) as P); // unchanged: keep the value the app already holds
    }
    for (const id of this.#entries.keys()) if (!next.has(id)) change.left.push(id);
    this.#entries = next;
    if (!quietWhenSame || change.joined.length || change.updated.length || change.left.length) this.#emit(change);
  }

  /** Runs the listeners; one that throws is reported asynchronously and does not stop the others. */
  #emit(change: PresenceChange<P>): void {
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
