// The dokit room with dokit/observability installed (bench/observability.ts): the same
// behaviour as worker/dokit.ts, plus "s:1" / "s:0", which add / remove one subscriber on
// every agents:* channel (it counts events: the cost of building and publishing them).
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../packages/dokit/src/lifecycle";
import { CHANNELS, type EventChannelKey, Observability, subscribe } from "../../packages/dokit/src/observability";
import { State } from "../../packages/dokit/src/state";
import { WebSockets } from "../../packages/dokit/src/websockets";
import { BenchCallables, classify, INITIAL_STATE } from "./app";

/** The isolate's subscriber: its unsubscribe functions while it is on. */
let subscribed: (() => void)[] = [];
let received = 0;

function setSubscriber(on: boolean): void {
  for (const stop of subscribed) stop();
  subscribed = on ? (Object.keys(CHANNELS) as EventChannelKey[]).map((key) => subscribe(key, () => void received++)) : [];
}

export class ObservedRoom extends DurableObject {
  readonly #instance = crypto.randomUUID();
  readonly state = new State<unknown>({
    initialState: INITIAL_STATE,
    onChanged: (_state, source) => this.webSockets.broadcastState(source),
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
        else if (message === "s:1" || message === "s:0") {
          setSubscriber(message === "s:1");
          connection.send(`s=${received}`);
        }
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(new Observability()).use(this.state).use(this.webSockets);

  onRequest(): Response {
    return new Response("ok");
  }
}
