// The dokit room with dokit/observability installed (bench/observability.ts): the room
// of worker/dokit.ts, plus "s:1" / "s:0", which add / remove one subscriber on every
// agents:* channel (it counts events: the cost of building and publishing them).
import { CHANNELS, type EventChannelKey, Observability, subscribe } from "dokit/observability";
import { DokitRoom } from "./dokit";

/** The isolate's subscriber: its unsubscribe functions while it is on. */
let subscribed: (() => void)[] = [];
let received = 0;

function setSubscriber(on: boolean): void {
  for (const stop of subscribed) stop();
  subscribed = on ? (Object.keys(CHANNELS) as EventChannelKey[]).map((key) => subscribe(key, () => void received++)) : [];
}

export class ObservedRoom extends DokitRoom {
  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.lifecycle.use(new Observability());
    // Runs before the room's own handlers; `true` claims the switch messages.
    this.webSockets.use({
      onMessage: (connection, message) => {
        if (message !== "s:1" && message !== "s:0") return false;
        setSubscriber(message === "s:1");
        connection.send(`s=${received}`);
        return true;
      },
    });
  }
}
