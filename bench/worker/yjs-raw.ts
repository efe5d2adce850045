// Reference rooms for `bench/yjs-parts.ts`: the least a hibernating Durable Object must do per Yjs
// update, written by hand (no dokit, no partyserver), so dokit's and y-partyserver's CPU per update
// can be split into the runtime's part and their own. One class; the room's name picks what it does:
//   raw-…    applies the update and relays the message as it came to every other socket
//   sql-…    the same, after inserting the update into SQLite (one row; the runtime's implicit
//            transaction commits it at the end of the event, and holds the relay until then)
//   sync-…   as sql-, but relays once `storage.sync()` says the commit is done (the sends are not held)
//   tx-…     as sql-, the insert in `transactionSync` (committed there, before the update is applied)
//   pk-…     as sql-, into a table keyed (seq, part) as dokit's tail is (a rowid table and its key's index)
//   read-…   as raw-, plus one SQLite statement that writes nothing (the cost of a statement alone)
import { DurableObject } from "cloudflare:workers";
import * as Y from "yjs";

export class RawYjsRoom extends DurableObject {
  readonly #doc = new Y.Doc();
  #seq = 0;
  readonly #mode: string;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.#mode = (ctx.id.name ?? "").split("-")[0] ?? "raw";
    if (this.#mode === "pk") ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS updates (seq INTEGER NOT NULL, part INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (seq, part))");
    else if (this.#mode !== "raw") ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS updates (seq INTEGER PRIMARY KEY, data BLOB NOT NULL)");
  }

  override fetch(request: Request): Response {
    if (request.headers.get("upgrade") !== "websocket") return new Response("no route", { status: 404 });
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    if (typeof message === "string") return;
    const bytes = new Uint8Array(message);
    if (bytes[0] !== 0 || bytes[1] !== 2) return;
    // [0, 2, varUint length, update]
    let at = 2;
    let length = 0;
    for (let scale = 1; ; scale *= 128) {
      const byte = bytes[at++] as number;
      length += (byte & 0x7f) * scale;
      if (byte < 0x80) break;
    }
    const update = bytes.subarray(at, at + length);
    if (this.#mode === "sql" || this.#mode === "sync") this.ctx.storage.sql.exec("INSERT INTO updates (seq, data) VALUES (?, ?)", ++this.#seq, update);
    else if (this.#mode === "tx") this.ctx.storage.transactionSync(() => this.ctx.storage.sql.exec("INSERT INTO updates (seq, data) VALUES (?, ?)", ++this.#seq, update));
    else if (this.#mode === "pk") this.ctx.storage.sql.exec("INSERT INTO updates (seq, part, data) VALUES (?, ?, ?)", ++this.#seq, 0, update);
    else if (this.#mode === "read") this.ctx.storage.sql.exec("SELECT count(*) FROM updates WHERE seq = ?", 0).one();
    Y.applyUpdate(this.#doc, update);
    if (this.#mode === "sync") await this.ctx.storage.sync();
    for (const other of this.ctx.getWebSockets()) if (other !== ws) other.send(message);
  }
}
