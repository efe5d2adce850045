import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";
import { Observability } from "../../src/observability";
import { type SessionChangeEvent, type SessionMessage, Sessions } from "../../src/sessions";
import { WebSockets } from "../../src/websockets";

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

const param = (uri: string | null, name: string) => (uri ? new URL(uri).searchParams.get(name) : null);

/**
 * Live history: `?role=writer` may write, everyone else reads; `?mode=view` is readonly; the session
 * "private" is nobody's. Client messages are limited to 4 KiB.
 */
export class LiveConversation extends DurableObject<Env> {
  readonly sessions = new Sessions({
    maxClientMessageBytes: 4096,
    reservedMetadataKeys: ["trusted"],
    access: (connection, session) => (session === "private" ? false : param(connection.uri, "role") === "writer" ? "write" : "read"),
  });
  readonly webSockets = new WebSockets({ readonly: (_connection, ctx) => new URL(ctx.request.url).searchParams.get("mode") === "view" });
  readonly lifecycle = Lifecycle.install(this).use(this.sessions).use(this.webSockets);

  /** A server write. */
  async serverAppend(session: string, message: SessionMessage, parentId?: string | null): Promise<boolean> {
    const options = parentId === undefined ? {} : { parentId };
    return (await this.sessions.session(session).appendMessage(message, options)).inserted;
  }

  /** @returns the ids of a session's active path */
  async path(session: string): Promise<string[]> {
    return (await this.sessions.session(session).getHistory()).map((message) => message.id);
  }

  async serverUpdate(session: string, message: SessionMessage): Promise<void> {
    await this.sessions.session(session).updateMessage(message);
  }

  async serverDelete(session: string, ids: string[]): Promise<void> {
    await this.sessions.session(session).deleteMessages(ids);
  }
}

/** Sessions with Observability installed: failures are published as `session:error`. */
export class ObservedConversation extends DurableObject<Env> {
  readonly sessions = new Sessions();
  readonly lifecycle = Lifecycle.install(this).use(this.sessions).use(new Observability());
  readonly session = this.sessions.session();
}
