import { closeWith } from "../frames/close";
import { parseObject } from "../frames/parse";
import { trySend } from "../frames/send";
import type { InspectorSnapshot } from "./options";

// The page's live feed: one plain (non-hibernating) WebSocket per open page.
//
// It is not a user connection: it is accepted with `server.accept()`, not
// `ctx.acceptWebSocket`, so `ctx.getWebSockets()` (and so `getConnections()`
// and every broadcast) never lists it, and its messages never reach
// `webSocketMessage`. The price, by design of the runtime: a non-hibernating
// socket keeps the object in memory while a page is open (`evictDurableObject`
// waits for it to close). When the instance is reset anyway (a deploy, an
// exceeded limit, `ctx.abort`), the socket ends, the page reconnects and reads a
// fresh snapshot from the new instance.
//
// Events: the Inspector subscribes to the event channels only while a page is
// open (so an object nobody inspects keeps zero subscribers), and forwards the
// events of its own object: several objects of a class can share an isolate
// and its channels, so an event must name this object's class and name.
//
// Messages, server → page (JSON):
//   {"kind":"snapshot","snapshot":{…}}                  on open, after an action, on request
//   {"kind":"event","channel":"agents:rpc","event":{…}}  each event of this object
//   {"kind":"error","message":"…"}                       an action that could not be done
// Messages, page → server (JSON):
//   {"action":"snapshot"}  {"action":"close","id":"…"}  {"action":"readonly","id":"…","readonly":true}

/** The channels the Inspector listens to (the reference's names: `agents:<area>`). */
const CHANNELS = ["agents:lifecycle", "agents:state", "agents:rpc", "agents:message", "agents:schedule", "agents:mcp", "agents:task"] as const;

type ChannelListener = (message: unknown, name: string | symbol) => void;
/** The part of `node:diagnostics_channel` the feed uses. */
interface Channels {
  subscribe(name: string, listener: ChannelListener): void;
  unsubscribe(name: string, listener: ChannelListener): boolean;
}

/**
 * The runtime's `node:diagnostics_channel`, or `undefined` without it. Read with
 * `process.getBuiltinModule` rather than imported, as dokit's events are: a static
 * import would stop a Worker without `nodejs_compat` from starting. Without the
 * module the page still shows its snapshot, with no events.
 */
function channels(): Channels | undefined {
  // SAFETY: getBuiltinModule returns the runtime's node:diagnostics_channel, which has subscribe/unsubscribe.
  return (globalThis as { process?: { getBuiltinModule?(id: string): Channels | undefined } }).process?.getBuiltinModule?.("node:diagnostics_channel");
}

const OPEN = 1;

/** Which events belong to the inspected object. */
export interface FeedIdentity {
  /** The class names an event's `agent` may carry (the host's class name and its kebab form). */
  agents: readonly string[];
  /** @returns the object's name, as events carry it */
  name(): string;
}

/** The open pages of one Inspector, and the events they see. */
export class Feed {
  readonly #sockets = new Set<WebSocket>();
  /** The latest events of this object, serialized, oldest first. */
  readonly #recent: string[] = [];
  readonly #identity: FeedIdentity;
  readonly #snapshot: () => Promise<InspectorSnapshot>;
  readonly #act: (action: Record<string, unknown>) => string | undefined;
  readonly #maxEvents: number;
  #subscribed = false;

  /**
   * @param identity - the object's class names and name, to pick its events
   * @param snapshot - reads what the page shows
   * @param act - runs a page's action; returns an error text, or `undefined` when done
   * @param maxEvents - how many recent events a page that opens receives
   */
  constructor(
    identity: FeedIdentity,
    snapshot: () => Promise<InspectorSnapshot>,
    act: (action: Record<string, unknown>) => string | undefined,
    maxEvents: number,
  ) {
    this.#identity = identity;
    this.#snapshot = snapshot;
    this.#act = act;
    this.#maxEvents = maxEvents;
  }

  /** Serves one page's socket (already accepted): a snapshot, the recent events, then live events. */
  open(socket: WebSocket): void {
    this.#sockets.add(socket);
    this.#subscribe();
    socket.addEventListener("message", (event) => void this.#receive(socket, event.data));
    socket.addEventListener("close", (event) => {
      closeWith(socket, event.code, event.reason); // reciprocate
      this.#drop(socket);
    });
    socket.addEventListener("error", () => this.#drop(socket));
    // The events so far, taken now: one published while the snapshot is read goes out live only.
    const backlog = [...this.#recent];
    void this.#sendSnapshot([socket]).then(() => {
      for (const line of backlog) trySend(socket, line);
    });
  }

  /** Closes every page's socket (the object is being destroyed). */
  closeAll(): void {
    for (const socket of this.#sockets) closeWith(socket, 1001, "Durable Object destroyed");
    this.#sockets.clear();
    this.#unsubscribe();
  }

  async #receive(socket: WebSocket, data: unknown): Promise<void> {
    const action = typeof data === "string" ? parseObject(data) : undefined;
    let error: string | undefined;
    try {
      error = action ? this.#act(action) : "Expected a JSON action";
    } catch (thrown) {
      console.error("dokit: an Inspector action failed", thrown);
      error = "The action failed (the object logged why)";
    }
    if (error !== undefined) {
      trySend(socket, JSON.stringify({ kind: "error", message: error }));
      return;
    }
    // Every open page sees the result of an action, not only the one that asked.
    await this.#sendSnapshot(action?.action === "snapshot" ? [socket] : [...this.#sockets]);
  }

  async #sendSnapshot(sockets: WebSocket[]): Promise<void> {
    let line: string;
    try {
      line = JSON.stringify({ kind: "snapshot", snapshot: await this.#snapshot() });
    } catch (error) {
      console.error("dokit: the Inspector could not read a snapshot", error);
      line = JSON.stringify({ kind: "error", message: "Could not read a snapshot (the object logged why)" });
    }
    for (const socket of sockets) if (!trySend(socket, line)) this.#drop(socket);
  }

  /** A channel listener: keeps and forwards the events of this object only. */
  readonly #listener: ChannelListener = (message, channel) => {
    if (!this.#isOurs(message)) return;
    let line: string;
    try {
      line = JSON.stringify({ kind: "event", channel: String(channel), event: message }, (_key, v) => (typeof v === "bigint" ? String(v) : v));
    } catch {
      return; // an event that is not JSON is not shown
    }
    this.#recent.push(line);
    if (this.#recent.length > this.#maxEvents) this.#recent.shift();
    for (const socket of this.#sockets) {
      try {
        if (socket.readyState === OPEN && trySend(socket, line)) continue;
      } catch {
        // This listener belongs to an instance that was reset: its sockets are another
        // object's I/O now (the runtime refuses to touch them). It lets go of the channels.
      }
      this.#drop(socket);
    }
  };

  #isOurs(message: unknown): boolean {
    if (message === null || typeof message !== "object") return false;
    const { agent, name } = message as { agent?: unknown; name?: unknown };
    return typeof agent === "string" && this.#identity.agents.includes(agent) && name === this.#identity.name();
  }

  #drop(socket: WebSocket): void {
    this.#sockets.delete(socket);
    if (this.#sockets.size === 0) this.#unsubscribe();
  }

  #subscribe(): void {
    const module = channels();
    if (this.#subscribed || !module) return;
    for (const channel of CHANNELS) module.subscribe(channel, this.#listener);
    this.#subscribed = true;
  }

  #unsubscribe(): void {
    const module = channels();
    if (!this.#subscribed || !module) return;
    for (const channel of CHANNELS) module.unsubscribe(channel, this.#listener);
    this.#subscribed = false;
  }
}
