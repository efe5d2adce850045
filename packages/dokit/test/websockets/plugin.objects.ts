import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";
import { State } from "../../src/state";
import { type Connection, type ConnectionPlugin, type ConnectionSlot, type PluginDoor, WebSockets } from "../../src/websockets";

/** Instances built in this isolate (a wake after an eviction builds one). */
let constructed = 0;

/**
 * A user-written plug-in, as docs/websockets.md shows it: each connection's vote lives in its
 * slot `vote` (kept across hibernation), `{"type":"vote","choice"}` sets it and sends everyone the
 * tally, and a one-byte binary message `V` asks for the tally. Other binary messages are not its own.
 */
export class Votes implements ConnectionPlugin {
  readonly pluginName = "votes";
  #sockets!: WebSockets;
  /** Its slot (tests read and write it directly). */
  vote!: ConnectionSlot<string>;
  /** The door it was handed (tests claim more slots through it). */
  door!: PluginDoor;

  plug(door: PluginDoor): void {
    const { claims, sockets, slot } = door;
    this.door = door;
    this.#sockets = sockets;
    this.vote = slot<string>("vote", { maxBytes: 34, check: (value): value is string => typeof value === "string" });
    claims.frame("vote", (connection, frame) => {
      // Not a vote it understands: declined, so the frame goes on to onMessage.
      if (typeof frame.choice !== "string" || frame.choice.length > 32) return false;
      this.vote.set(connection, frame.choice);
      sockets.broadcast({ type: "tally", tally: this.tally() });
    });
  }

  binary(connection: Connection, message: ArrayBuffer): boolean {
    const bytes = new Uint8Array(message);
    if (bytes.length !== 1 || bytes[0] !== 0x56) return false;
    connection.send(JSON.stringify({ type: "tally", tally: this.tally() }));
    return true;
  }

  onConnect(connection: Connection): void {
    connection.send(JSON.stringify({ type: "tally", tally: this.tally() }));
  }

  /** @returns how many open connections voted for each choice */
  tally(): Record<string, number> {
    const tally: Record<string, number> = {};
    for (const connection of this.#sockets.getConnections()) {
      const vote = this.vote.get(connection);
      if (vote !== undefined) tally[vote] = (tally[vote] ?? 0) + 1;
    }
    return tally;
  }
}

/**
 * A user-written plug-in on the door's other hooks: `drops` counts each "shout" as a strike in its
 * slot `strikes` and drops it (the second closes the connection with 4000, told through
 * `door.closed`), answers "accepts" with the sockets `accepted` counted by this instance, and lets
 * everything else through.
 */
export class Bouncer implements ConnectionPlugin {
  readonly pluginName = "bouncer";
  #door!: PluginDoor;
  #strikes!: ConnectionSlot<number>;
  #accepts = 0;

  plug(door: PluginDoor): void {
    this.#door = door;
    this.#strikes = door.slot<number>("strikes", { maxBytes: 4, check: (value): value is number => typeof value === "number" });
  }

  accepted(): void {
    this.#accepts++;
  }

  drops(connection: Connection, message: string | ArrayBuffer): boolean {
    if (message === "accepts") return connection.send(`accepts:${this.#accepts}`), true;
    if (message !== "shout") return false;
    const strikes = (this.#strikes.get(connection) ?? 0) + 1;
    this.#strikes.set(connection, strikes);
    connection.send(`strike:${strikes}`);
    if (strikes >= 2) {
      connection.close(4000, "bounced");
      this.#door.closed(connection);
    }
    return true;
  }
}

/**
 * A user-written plug-in on the connect sequence: it adds `greeting` to the identity frame and sends
 * `{"type":"greet"}` right after the identity frame (and after the state's frame, an earlier plug-in's).
 */
export const greeter: ConnectionPlugin = {
  pluginName: "greeter",
  plug() {},
  identity: { greeting: "hi", type: "not-the-identity" },
  connectFrame: () => JSON.stringify({ type: "greet" }),
};

/** A WebSockets with a synced state and the Votes, Bouncer and greeter plug-ins; what no plug-in claims is echoed as `unclaimed:<text or byte count>`. */
export class WsVotes extends DurableObject<Env> {
  readonly votes = new Votes();
  readonly round = new State({ initialState: { round: 1 } });
  readonly webSockets: WebSockets = new WebSockets({
    state: this.round,
    plugins: [this.votes, new Bouncer(), greeter],
    handlers: {
      onMessage: (connection, message) => {
        if (message === "constructed") return connection.send(String(constructed));
        connection.send(`unclaimed:${typeof message === "string" ? message : `${message.byteLength} bytes`}`);
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    constructed++;
  }
}
