import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";
import { type SessionChangeEvent, Sessions } from "../../src/sessions";

/** Sessions on a plain object, with a change-feed log; client messages limited to 64 KiB. */
export class Conversation extends DurableObject<Env> {
  readonly sessions = new Sessions({ reservedMetadataKeys: ["channel", "turnMetadata"], maxClientMessageBytes: 64 * 1024 });
  readonly lifecycle = Lifecycle.install(this).use(this.sessions);
  readonly session = this.sessions.session();
  /** Every change-feed event this instance saw, in order. */
  readonly events: SessionChangeEvent[] = [];
  readonly unsubscribe = this.sessions.subscribe((event) => {
    this.events.push(event);
  });
}

/** Placeholder for the live-history scenarios. */
export class LiveConversation extends DurableObject<Env> {
  readonly sessions = new Sessions();
  readonly lifecycle = Lifecycle.install(this).use(this.sessions);
}
