import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";
import { Presence } from "../../src/presence";
import { WebSockets } from "../../src/websockets";

/** Instances built in this isolate (a wake after an eviction builds one). */
let constructed = 0;

/** A cursor with a name, as a board would publish it. */
type Cursor = { name: string; x?: number; y?: number };

/**
 * Presence with a 256-byte bound, a check that every value has a string `name`, and viewers tagged
 * `hidden` left out. `?readonly=1` makes a readonly connection. Plain text messages ask the object:
 * `list`, `count`, `get:<id>`, `set:<json>` (the server sets the sender's value), `clear`, `constructed`.
 */
export class WsPresence extends DurableObject<Env> {
  readonly presence = new Presence<Cursor>({
    maxBytes: 256,
    validate: (value) => {
      if (typeof value?.name !== "string") throw new Error("a name is required");
    },
    visibleTo: (viewer) => !viewer.tags.includes("hidden"),
  });
  readonly webSockets: WebSockets = new WebSockets({
    presence: this.presence,
    getConnectionTags: (_connection, ctx) => new URL(ctx.request.url).searchParams.getAll("tag"),
    readonly: (_connection, ctx) => new URL(ctx.request.url).searchParams.get("readonly") === "1",
    handlers: {
      onMessage: (connection, message) => {
        const text = String(message);
        if (text === "constructed") return connection.send(String(constructed));
        if (text === "list") return connection.send(JSON.stringify(this.presence.list()));
        if (text === "count") return connection.send(String(this.presence.count()));
        if (text.startsWith("get:")) return connection.send(JSON.stringify(this.presence.get(text.slice(4)) ?? "absent"));
        if (text === "clear") return this.presence.clear(connection);
        if (text.startsWith("set:")) {
          try {
            this.presence.set(connection, JSON.parse(text.slice(4)) as Cursor);
            connection.send("set");
          } catch (error) {
            connection.send(`refused:${(error as { code?: string }).code}:${(error as Error).message}`);
          }
          return;
        }
        connection.send(`echo:${text}`);
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    constructed++;
  }
}
