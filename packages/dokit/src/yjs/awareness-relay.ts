import type { Connection } from "../lifecycle/connection";
import { Answers } from "./answers";
import { type AwarenessEntry, leaving, mergeAwareness, readAwareness, writeAwareness } from "./awareness";
import { awarenessMessage } from "./wire";

/** The state kept for a client whose awareness is over the budget: present, its state not kept (never valid JSON). */
const KEPT_OUT = "";

/** The bounds of the relay (YjsDocument's options). */
export interface AwarenessBounds {
  /** The largest entries of one connection kept in its attachment, as JSON. */
  maxBytes: number;
  /** The most clients one connection speaks for. */
  perConnection: number;
  /** The most clients the document's connections speak for together. */
  perDocument: number;
}

/** Where the relay keeps a connection's entries (YjsDocument's connection slot). */
export interface AwarenessKeep {
  /** @returns the connection's kept entries, `undefined` when it has none */
  get(connection: Connection): AwarenessEntry[] | undefined;
  /** Stores the connection's entries. @throws when its attachment cannot hold them */
  set(connection: Connection, entries: AwarenessEntry[]): void;
}

/** Who speaks for a client: the connection that introduced it, and the highest clock it sent. */
interface Owner {
  connection: string;
  clock: number;
}

/**
 * The document's awareness (cursors, names) without y-protocols' Awareness class and its timer.
 * Each client id belongs to the connection that introduced it (the first to announce it while no
 * open connection spoke for it) until that connection closes: only that connection's entries for
 * it are relayed and kept, so nobody can set, silence or remove another's awareness, whatever clock
 * it sends. Each connection's own entries are kept in its attachment, so ownership, clocks and
 * states survive hibernation, and a closed connection's clients are withdrawn and forgotten.
 */
export class AwarenessRelay {
  readonly #bounds: AwarenessBounds;
  readonly #connections: () => Connection[];
  readonly #send: (message: Uint8Array, except: Connection | undefined) => void;
  readonly #kept: AwarenessKeep;
  /** Each client's owner, rebuilt from the open connections' attachments after a wake. */
  #owners: Map<number, Owner> | undefined;
  /** Counts every change relayed, so a repeated query with nothing new is not answered again. */
  #version = 0;
  /** Which awareness queries are answered. */
  readonly #answers = new Answers();
  #warned = false;

  /**
   * @param bounds - what one connection and the document may hold
   * @param connections - the open Yjs connections
   * @param send - sends a message to every Yjs connection but `except`
   * @param kept - where each connection's entries are kept
   */
  constructor(bounds: AwarenessBounds, connections: () => Connection[], send: (message: Uint8Array, except: Connection | undefined) => void, kept: AwarenessKeep) {
    this.#bounds = bounds;
    this.#kept = kept;
    this.#connections = connections;
    this.#send = send;
  }

  /**
   * A client's awareness update (`message` is the whole `[1, update]` message, relayed as it came
   * when every entry in it is news).
   * @throws MalformedMessage when the update is cut short
   */
  receive(connection: Connection, update: Uint8Array, message: Uint8Array): void {
    const owners = this.#ownersOf();
    const previous = this.#kept.get(connection) ?? [];
    const entries = readAwareness(update);
    const news: AwarenessEntry[] = [];
    const introduced: number[] = [];
    let speaksFor = previous.length;
    for (const entry of entries) {
      const [client, clock, state] = entry;
      const owner = owners.get(client);
      if (owner) {
        // Another connection's client, or no news: y-websocket's provider sends back every state it
        // hears at the same clock, and passes on the removals it decides after a timeout.
        if (owner.connection !== connection.id || clock <= owner.clock) continue;
        owner.clock = clock;
      } else {
        // A client nobody speaks for: introduced by this connection, within the bounds. Removing one is no news.
        if (state === "null") continue;
        if (speaksFor >= this.#bounds.perConnection || owners.size >= this.#bounds.perDocument) {
          this.#warnOnce(connection);
          continue;
        }
        speaksFor++;
        owners.set(client, { connection: connection.id, clock });
        introduced.push(client);
      }
      news.push(entry);
    }
    if (!news.length) return;
    if (!this.#keep(connection, mergeAwareness(previous, news))) {
      // Its ownership could not be kept across a wake: the clients it introduced are not taken.
      for (const client of introduced) owners.delete(client);
      const kept = news.filter(([client]) => !introduced.includes(client));
      if (!kept.length) return;
      news.length = 0;
      news.push(...kept);
    }
    this.#version++;
    this.#send(news.length === entries.length ? message : awarenessMessage(writeAwareness(news)), connection);
  }

  /** A connection closed (also one that closed while the object slept): its clients' awareness goes, and who they were is forgotten. */
  left(connection: Connection): void {
    this.#answers.forget(connection.id);
    const entries = this.#kept.get(connection);
    if (!entries) return;
    for (const [client] of entries) if (this.#owners?.get(client)?.connection === connection.id) this.#owners.delete(client);
    const gone = leaving(entries);
    if (!gone.length) return;
    this.#version++;
    this.#send(awarenessMessage(writeAwareness(gone)), connection);
  }

  /**
   * @returns the answer to a connection's awareness query: everyone's kept awareness; `undefined` for a
   *   repeat with nothing new, or within a second of the last answer (answers.ts)
   */
  answer(connection: Connection): Uint8Array | undefined {
    return this.#answers.take(connection.id, this.#version) ? awarenessMessage(writeAwareness(this.all(undefined))) : undefined;
  }

  /** @returns the kept entries of every Yjs connection but `except` (states only: none that left or was over the budget) */
  all(except: Connection | undefined): AwarenessEntry[] {
    const all: AwarenessEntry[] = [];
    for (const connection of this.#connections()) {
      if (connection === except) continue;
      for (const entry of this.#kept.get(connection) ?? []) if (entry[2] !== "null" && entry[2] !== KEPT_OUT) all.push(entry);
    }
    return all;
  }

  /** @returns the states the clients `connection` speaks for published (none that left); a state over the budget is `undefined` */
  of(connection: Connection): { clientID: number; state: unknown }[] {
    const entries = this.#kept.get(connection) ?? [];
    return entries.filter((entry) => entry[2] !== "null").map(([clientID, , state]) => ({ clientID, state: state === KEPT_OUT ? undefined : parsed(state) }));
  }

  /**
   * Keeps a connection's entries in its attachment; over the budget, their ids and clocks without the states.
   * @returns whether they were kept (not when the user's connection state leaves no room)
   */
  #keep(connection: Connection, kept: AwarenessEntry[]): boolean {
    const idsOnly = kept.map(([client, clock, state]): AwarenessEntry => [client, clock, state === "null" ? state : KEPT_OUT]);
    for (const awareness of JSON.stringify(kept).length <= this.#bounds.maxBytes ? [kept, idsOnly] : [idsOnly]) {
      try {
        this.#kept.set(connection, awareness);
        return true;
      } catch {
        // The attachment is full (the user's connection state and the entries together): try without the states.
      }
    }
    return false;
  }

  #ownersOf(): Map<number, Owner> {
    if (this.#owners) return this.#owners;
    const owners = new Map<number, Owner>();
    for (const connection of this.#connections()) {
      for (const [client, clock] of this.#kept.get(connection) ?? []) if (!owners.has(client)) owners.set(client, { connection: connection.id, clock });
    }
    return (this.#owners = owners);
  }

  #warnOnce(connection: Connection): void {
    if (this.#warned) return;
    this.#warned = true;
    console.warn(
      `dokit: YjsDocument ignores new awareness clients of connection ${connection.id} and others past their bounds ` +
        `(${this.#bounds.perConnection} per connection, ${this.#bounds.perDocument} per document); logged once`,
    );
  }
}

/** @returns a relayed state as a value (the wire carries JSON text, unchecked: text that is not JSON is returned as it came) */
function parsed(state: string): unknown {
  try {
    return JSON.parse(state);
  } catch {
    return state;
  }
}
