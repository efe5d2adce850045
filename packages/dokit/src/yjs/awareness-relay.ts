import type { Connection } from "../lifecycle/connection";
import { flagsOf, updateFlags } from "../websockets/connection";
import { type AwarenessEntry, leaving, mergeAwareness, readAwareness, writeAwareness } from "./awareness";
import { awarenessMessage } from "./wire";

/** The state kept for a client whose awareness is over the budget: present, its state not kept (never valid JSON). */
const KEPT_OUT = "";

/**
 * The document's awareness (cursors, names) without y-protocols' Awareness class and its timer:
 * messages are relayed when they carry news, and each connection's own entries are kept in its
 * attachment, so newcomers after a wake get them and a closed connection's clients are withdrawn.
 */
export class AwarenessRelay {
  readonly #maxBytes: number;
  readonly #connections: () => Connection[];
  readonly #send: (message: Uint8Array, except: Connection | undefined) => void;
  /** The highest clock seen per client, rebuilt from the connections' attachments after a wake. */
  #clocks: Map<number, number> | undefined;

  /**
   * @param maxBytes - the largest entries of one connection kept in its attachment, as JSON
   * @param connections - the open Yjs connections
   * @param send - sends a message to every Yjs connection but `except`
   */
  constructor(maxBytes: number, connections: () => Connection[], send: (message: Uint8Array, except: Connection | undefined) => void) {
    this.#maxBytes = maxBytes;
    this.#connections = connections;
    this.#send = send;
  }

  /**
   * A client's awareness update (`message` is the whole `[1, update]` message, relayed as it came).
   * @throws MalformedMessage when the update is cut short
   */
  receive(connection: Connection, update: Uint8Array, message: Uint8Array): void {
    // News: a clock higher than any seen for its client. y-protocols clients pass on everything they
    // hear (y-websocket's provider sends back each state it receives, at the same clock): a message
    // with no news is not relayed, or every change would come back from every client.
    const known = this.#knownClocks();
    const news = readAwareness(update).filter(([client, clock]) => {
      if (clock <= (known.get(client) ?? -1)) return false;
      known.set(client, clock);
      return true;
    });
    if (!news.length) return;
    this.#send(message, connection);
    // Kept: the news of the clients this connection speaks for (not a client's removal of another it timed out).
    const previous = flagsOf(connection).yjs?.awareness ?? [];
    const own = news.filter(([client, , state]) => state !== "null" || previous.some((entry) => entry[0] === client));
    if (!own.length) return;
    const kept = mergeAwareness(previous, own);
    // Over the budget: the ids and clocks are kept (so the client's leaving is announced), not the states.
    const stored = JSON.stringify(kept).length <= this.#maxBytes ? kept : kept.map(([client, clock, state]): AwarenessEntry => [client, clock, state === "null" ? state : KEPT_OUT]);
    try {
      updateFlags(connection, { yjs: { awareness: stored } });
    } catch {
      // The attachment is full (the user's connection state and the entries together): the entries are not kept.
    }
  }

  /** A connection closed (also one that closed while the object slept): its clients' awareness goes. */
  left(connection: Connection): void {
    const entries = flagsOf(connection).yjs?.awareness;
    if (!entries) return;
    // A client another open connection speaks for has reconnected (its old socket closes late): it stays.
    const elsewhere = new Set<number>();
    for (const other of this.#connections()) {
      if (other === connection) continue;
      for (const [client, , state] of flagsOf(other).yjs?.awareness ?? []) if (state !== "null") elsewhere.add(client);
    }
    const gone = leaving(entries).filter(([client]) => !elsewhere.has(client));
    if (gone.length) this.#send(awarenessMessage(writeAwareness(gone)), connection);
  }

  /** @returns the kept entries of every Yjs connection but `except` (states only: none that left or was over the budget) */
  all(except: Connection | undefined): AwarenessEntry[] {
    const all: AwarenessEntry[] = [];
    for (const connection of this.#connections()) {
      if (connection === except) continue;
      for (const entry of flagsOf(connection).yjs?.awareness ?? []) if (entry[2] !== "null" && entry[2] !== KEPT_OUT) all.push(entry);
    }
    return all;
  }

  /** @returns the states the clients `connection` speaks for published (none that left); a state over the budget is `undefined` */
  of(connection: Connection): { clientID: number; state: unknown }[] {
    const entries = flagsOf(connection).yjs?.awareness ?? [];
    return entries.filter((entry) => entry[2] !== "null").map(([clientID, , state]) => ({ clientID, state: state === KEPT_OUT ? undefined : parsed(state) }));
  }

  #knownClocks(): Map<number, number> {
    if (this.#clocks) return this.#clocks;
    const clocks = new Map<number, number>();
    for (const connection of this.#connections()) {
      for (const [client, clock] of flagsOf(connection).yjs?.awareness ?? []) clocks.set(client, Math.max(clock, clocks.get(client) ?? -1));
    }
    return (this.#clocks = clocks);
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
