import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";
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

/** A WebSockets with the Votes plug-in; what no plug-in claims is echoed as `unclaimed:<text or byte count>`. */
export class WsVotes extends DurableObject<Env> {
  readonly votes = new Votes();
  readonly webSockets: WebSockets = new WebSockets({
    plugins: [this.votes],
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
