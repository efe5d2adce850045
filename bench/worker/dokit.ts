// The room with dokit: Lifecycle + WebSockets (with callables) + State.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "dokit/lifecycle";
import { State } from "dokit/state";
import { WebSockets } from "dokit/websockets";
import { BenchCallables, classify, INITIAL_STATE } from "./app";

export class DokitRoom extends DurableObject {
  readonly #instance = crypto.randomUUID();
  readonly state = new State<unknown>({
    initialState: INITIAL_STATE,
  });
  readonly webSockets: WebSockets = new WebSockets({
    state: this.state,
    callables: new BenchCallables(),
    handlers: {
      onMessage: (connection, message) => {
        const kind = classify(message);
        if (kind === "echo") connection.send(message);
        else if (kind === "broadcast") this.webSockets.broadcast(message);
        else if (kind === "instance") connection.send(`i:${this.#instance}`);
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.state).use(this.webSockets);

  onRequest(): Response {
    return new Response("ok");
  }
}
