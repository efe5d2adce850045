// The room with the reference: npm agents@0.32.0 capability modules
// (agents/lifecycle, agents/websockets, agents/state). The reference has no
// general broadcast, so the room iterates getConnections() as its docs show.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "agents/lifecycle";
import { State } from "agents/state";
import { WebSockets } from "agents/websockets";
import { BenchCallables, classify, INITIAL_STATE } from "./app";

export class RefRoom extends DurableObject {
  readonly #instance = crypto.randomUUID();
  readonly state: State<unknown> = new State<unknown>({
    initialState: INITIAL_STATE,
    onChanged: (_state, source) => this.webSockets.broadcastState(source),
  });
  readonly webSockets: WebSockets = new WebSockets({
    state: this.state,
    callables: new BenchCallables(),
    handlers: {
      onMessage: (connection, message) => {
        // The bench sends text frames only.
        const text = message as string;
        const kind = classify(text);
        if (kind === "echo") connection.send(text);
        else if (kind === "broadcast") for (const other of this.webSockets.getConnections()) other.send(text);
        else if (kind === "instance") connection.send(`i:${this.#instance}`);
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.state).use(this.webSockets);

  onRequest(): Response {
    return new Response("ok");
  }
}
